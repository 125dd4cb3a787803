/**
 * A device's snapshots, as the emulator keeps them: one folder per snapshot under the snapshot
 * folder (the AVD's `snapshots/` when launched from an AVD), so they survive a device restart.
 * Each holds `farm-sim-state.json`, the whole simulated device (AndroidSystem.saveState()).
 * Loading waits the device's snapshot-load delay (a real emulator needs ~0.6–0.7 s; `instant`: 0).
 */
import fs from "node:fs/promises";
import path from "node:path";
import { silentLogger, type Logger } from "@farm/log";
import type { AndroidSystem, SavedSystem } from "../android/system/android-system.ts";
import { decodeSnapshotFile, encodeSnapshotFile } from "./snapshot-file.ts";
import { FarmError, coerceError } from "@farm/errors";
import { sleep } from "@farm/time";

export const SNAPSHOT_STATE_FILE = "farm-sim-state.json";
/** Small metadata beside it (creation time, rotation), so listing never reads whole states. */
export const SNAPSHOT_INFO_FILE = "farm-sim-info.json";

export interface SnapshotInfo {
  name: string;
  /** ms since the epoch. */
  createdAtMs: number;
  /** Bytes on disk. */
  sizeBytes: number;
  /** Display rotation when saved (0..3). */
  rotation: number;
  /** False when the snapshot is of a device with another screen size (it would not load here). */
  compatible: boolean;
}

/** A refused snapshot operation; `message` is what the console's `KO:` and gRPC's `err` carry. */
export class SnapshotError extends FarmError<"invalid-name" | "not-found" | "io" | "corrupt" | "incompatible"> {
  /** the same input fails the same way (not retryable). */
  constructor(message: string, code: "invalid-name" | "not-found" | "io" | "corrupt" | "incompatible") {
    super(code, message);
    this.name = "SnapshotError";
  }
}

/** Names become folder names: letters, digits, `.`, `_`, `-`; not `.`/`..`; at most 128 characters. */
export function validateSnapshotName(name: string): void {
  if (typeof name !== "string" || !/^[A-Za-z0-9._-]{1,128}$/.test(name) || name === "." || name === "..") {
    throw new SnapshotError(`invalid snapshot name ${JSON.stringify(name)}: use 1–128 letters, digits, '.', '_' or '-' (no path separators)`, "invalid-name");
  }
}

export interface DeviceSnapshotsOptions {
  /** Folder holding one sub-folder per snapshot (created on first save). */
  dir: string;
  system: AndroidSystem;
  /** Delay of a load in ms, asked at each load (the device's latency profile may change). */
  loadDelayMs: () => number;
  /** One line per save / load / delete (event snapshot:save|load|delete). */
  logger?: Logger;
}

/** The device-level snapshot API (gRPC SnapshotService and the console's `avd snapshot …` use it). */
export class DeviceSnapshots {
  readonly dir: string;
  private lastLoaded: string | undefined;
  /** Operations run one at a time: a save never sees a half-done load. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly opts: DeviceSnapshotsOptions) {
    this.dir = opts.dir;
  }

  /** The snapshot loaded (or saved) last in this run, which ListSnapshots reports as `Loaded`. */
  get current(): string | undefined {
    return this.lastLoaded;
  }

  list(): Promise<SnapshotInfo[]> {
    return this.serial(() => this.listNow());
  }

  private get log(): Logger {
    return this.opts.logger ?? silentLogger;
  }

  save(name: string): Promise<SnapshotInfo> {
    return this.serial(async () => {
      const t0 = performance.now();
      validateSnapshotName(name);
      const state = this.opts.system.saveState();
      const bytes = encodeSnapshotFile(state);
      const info: SnapshotInfo = { name, createdAtMs: Date.now(), sizeBytes: bytes.length, rotation: this.opts.system.rotation(), compatible: true };
      const folder = path.join(this.dir, name);
      try {
        await fs.mkdir(folder, { recursive: true });
        const tmp = path.join(folder, `${SNAPSHOT_STATE_FILE}.${process.pid}.tmp`);
        await fs.writeFile(tmp, bytes);
        await fs.rename(tmp, path.join(folder, SNAPSHOT_STATE_FILE));
        await fs.writeFile(path.join(folder, SNAPSHOT_INFO_FILE), JSON.stringify({ createdAtMs: info.createdAtMs, rotation: info.rotation, screen: state.screen }) + "\n");
      } catch (e) {
        throw new SnapshotError(`could not save snapshot ${name} in ${folder}: ${coerceError(e).message}`, "io");
      }
      this.lastLoaded = name;
      this.log.info({ event: "snapshot:save", snapshot: name, bytes: info.sizeBytes, ms: Math.round(performance.now() - t0) }, "snapshot saved");
      return info;
    });
  }

  load(name: string): Promise<void> {
    return this.serial(async () => {
      const t0 = performance.now();
      validateSnapshotName(name);
      const file = path.join(this.dir, name, SNAPSHOT_STATE_FILE);
      let state: SavedSystem;
      try {
        state = decodeSnapshotFile(await fs.readFile(file));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "ENOENT") throw new SnapshotError(`snapshot ${name} does not exist (looked in ${this.dir})`, "not-found");
        throw new SnapshotError(`snapshot ${name} cannot be read (${file}): ${coerceError(e).message}`, "corrupt");
      }
      const delay = this.opts.loadDelayMs();
      if (delay > 0) await sleep(delay);
      try {
        this.opts.system.restoreState(state);
      } catch (e) {
        throw new SnapshotError(`snapshot ${name} cannot be loaded on this device: ${coerceError(e).message}`, "incompatible");
      }
      this.lastLoaded = name;
      this.log.info({ event: "snapshot:load", snapshot: name, delay_ms: delay, ms: Math.round(performance.now() - t0) }, "snapshot loaded");
    });
  }

  delete(name: string): Promise<void> {
    return this.serial(async () => {
      validateSnapshotName(name);
      const folder = path.join(this.dir, name);
      try {
        await fs.access(path.join(folder, SNAPSHOT_STATE_FILE));
      } catch {
        throw new SnapshotError(`snapshot ${name} does not exist (looked in ${this.dir})`, "not-found");
      }
      await fs.rm(folder, { recursive: true, force: true });
      if (this.lastLoaded === name) this.lastLoaded = undefined;
      this.log.info({ event: "snapshot:delete", snapshot: name }, "snapshot deleted");
    });
  }

  private async listNow(): Promise<SnapshotInfo[]> {
    let names: string[];
    try {
      names = (await fs.readdir(this.dir, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name).sort();
    } catch {
      return [];
    }
    const out: SnapshotInfo[] = [];
    for (const name of names) {
      try {
        const file = path.join(this.dir, name, SNAPSHOT_STATE_FILE);
        const st = await fs.stat(file);
        const meta = await readInfo(path.join(this.dir, name, SNAPSHOT_INFO_FILE));
        const screen = this.opts.system.screen;
        const compatible = !meta.screen || (meta.screen.width === screen.width && meta.screen.height === screen.height);
        out.push({ name, createdAtMs: meta.createdAtMs ?? Math.round(st.mtimeMs), sizeBytes: st.size, rotation: meta.rotation ?? 0, compatible });
      } catch {
        // a folder without our state file is not one of our snapshots (e.g. a real emulator's)
      }
    }
    return out;
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

async function readInfo(file: string): Promise<{ createdAtMs?: number; rotation?: number; screen?: { width: number; height: number } }> {
  try {
    const v: unknown = JSON.parse(await fs.readFile(file, "utf8"));
    if (typeof v !== "object" || v === null) return {};
    const o = v as Record<string, unknown>;
    return {
      ...(typeof o["createdAtMs"] === "number" ? { createdAtMs: o["createdAtMs"] } : {}),
      ...(typeof o["rotation"] === "number" ? { rotation: o["rotation"] } : {}),
      ...(isSize(o["screen"]) ? { screen: o["screen"] } : {}),
    };
  } catch {
    return {};
  }
}

function isSize(v: unknown): v is { width: number; height: number } {
  const o = v as { width?: unknown; height?: unknown } | null;
  return typeof o === "object" && o !== null && typeof o.width === "number" && typeof o.height === "number";
}
