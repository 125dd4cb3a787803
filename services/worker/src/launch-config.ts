/**
 * `farm worker --launch N --avd NAME [--emulator PATH] [--snapshot NAME]` and their environment names:
 * the emulators this worker launches itself. Off by default (the worker attaches to what its adb server lists).
 */
import fs from "node:fs";
import path from "node:path";
import type { SettingsReader } from "@farm/config";

export interface LaunchInput {
  /** How many emulators to launch; 0 = none. Env FARM_LAUNCH. */
  count?: number;
  /** The AVD every instance runs (read-only, shared). Env FARM_LAUNCH_AVD. */
  avd?: string;
  /** The emulator executable. Env FARM_EMULATOR; default `$ANDROID_SDK_ROOT/emulator/emulator` (or ANDROID_HOME's), else `emulator` on PATH. */
  emulator?: string;
  /** Boot from this snapshot. Env FARM_LAUNCH_SNAPSHOT. */
  snapshot?: string;
  /** Boot deadline per launch. Env FARM_LAUNCH_BOOT_TIMEOUT_MS. Default 120000. */
  bootTimeoutMs?: number;
  /** Health-check period (getStatus); a hang is 3 misses in a row. Default 5000. */
  healthIntervalMs?: number;
  /** First console port tried. Default 5554. */
  basePort?: number;
}

export interface WorkerLaunchConfig {
  count: number;
  avd: string;
  emulator: string;
  snapshot: string | undefined;
  bootTimeoutMs: number;
  healthIntervalMs: number;
  basePort: number;
}

const NAME = /^[A-Za-z0-9._-]{1,100}$/;

/** Where an Android SDK keeps the emulator, as launchers look for it. */
function defaultEmulator(r: SettingsReader): string {
  for (const root of [r.envValue("ANDROID_SDK_ROOT"), r.envValue("ANDROID_HOME")]) {
    if (!root) continue;
    const p = path.join(root, "emulator", "emulator");
    if (fs.existsSync(p)) return p;
  }
  return "emulator";
}

function checkName(v: string | undefined): void {
  if (v !== undefined && !NAME.test(v)) throw new Error(`'${v.slice(0, 80)}' must be 1-100 characters of A-Z a-z 0-9 . _ -`);
}

export function launchConfig(r: SettingsReader, input: LaunchInput | undefined): WorkerLaunchConfig | undefined {
  const count = r.int("launch", { flag: input?.count, env: "FARM_LAUNCH", default: 0, min: 0, max: 64 });
  if (count === 0) return undefined;
  const avd = r.check("avd", "FARM_LAUNCH_AVD", r.string("avd", { flag: input?.avd, env: "FARM_LAUNCH_AVD", default: undefined }), checkName);
  if (!avd) return r.fail("avd (FARM_LAUNCH_AVD)", "is needed to launch emulators: --avd NAME");
  const emulator = r.string("emulator", { flag: input?.emulator, env: "FARM_EMULATOR", default: undefined }) ?? defaultEmulator(r);
  return {
    count,
    avd,
    emulator: emulator.includes("/") ? path.resolve(emulator) : emulator,
    snapshot: r.check("snapshot", "FARM_LAUNCH_SNAPSHOT", r.string("snapshot", { flag: input?.snapshot, env: "FARM_LAUNCH_SNAPSHOT", default: undefined }), checkName),
    bootTimeoutMs: r.int("launch bootTimeoutMs", { flag: input?.bootTimeoutMs, env: "FARM_LAUNCH_BOOT_TIMEOUT_MS", default: 120_000, min: 1_000, max: 3_600_000 }),
    healthIntervalMs: r.int("launch healthIntervalMs", { flag: input?.healthIntervalMs, default: 5_000, min: 100, max: 600_000 }),
    basePort: r.int("launch basePort", { flag: input?.basePort, default: 5554, min: 1024, max: 65_000 }),
  };
}
