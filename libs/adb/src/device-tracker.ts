/**
 * `DeviceTracker`: one follower of the adb server's `host:track-devices`, reporting `add` (any state,
 * including offline), `change` (state changed) and `remove` against what it knew. When the server goes away
 * every known device is reported removed and the tracker keeps reconnecting; on reconnection it reports the
 * difference to what it knew. `AdbDriver.trackDevices` makes one.
 */
import type { AdbClient } from "./client.ts";
import type { ResolvedAdbConfig } from "./config.ts";
import { describeError } from "./result.ts";
import type { DeviceEvent, DeviceState } from "./types.ts";

export interface DeviceListEntry {
  serial: string;
  state: DeviceState;
}

export type DeviceChange = DeviceEvent & { kind: "add" | "remove" | "change" };

export interface DeviceTracking {
  /** Devices as currently known to the tracker. */
  devices(): DeviceListEntry[];
  /** Stops tracking (closes the server connection). */
  close(): void;
}

interface AdbkitDevice {
  id: string;
  type: string;
}

interface ChangeSet {
  added: AdbkitDevice[];
  changed: AdbkitDevice[];
  removed: AdbkitDevice[];
}

/** What we use of adbkit's Tracker. */
interface ServerTracker {
  end(): unknown;
  on(ev: string, fn: (...a: never[]) => void): unknown;
}

export interface DeviceTrackerDeps {
  client: AdbClient;
  cfg: ResolvedAdbConfig;
  /** Delay before reconnecting after losing the server. */
  retryMs: number;
  listener: (ev: DeviceChange) => void;
  /** Whether the owner (the driver) is closed: then no reconnection starts. */
  ownerClosed: () => boolean;
  /** Called once by `close()` (the driver forgets the tracker). */
  onClose: (t: DeviceTracker) => void;
}

export class DeviceTracker implements DeviceTracking {
  private readonly known = new Map<string, DeviceState>();
  private stopped = false;
  private tracker: ServerTracker | undefined;
  private retry: NodeJS.Timeout | undefined;

  constructor(private readonly d: DeviceTrackerDeps) {}

  /** Connects (and keeps reconnecting until `close()`). */
  start(): void {
    if (this.stopped || this.d.ownerClosed()) return;
    this.d.client.trackDevices().then(
      (t) => this.attach(t as unknown as ServerTracker),
      (e: unknown) => {
        const d = describeError(e, { host: this.d.cfg.host, port: this.d.cfg.port });
        this.d.cfg.logger.warn({ event: "adb:tracker-connect-failed", message: d.message }, "device tracker could not connect; retrying");
        // The server is unreachable: everything known is gone until it answers again.
        this.apply([]);
        if (!this.stopped) this.retry = setTimeout(() => this.start(), this.d.retryMs);
      },
    );
  }

  devices(): DeviceListEntry[] {
    return [...this.known].map(([serial, state]) => ({ serial, state }));
  }

  close(): void {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    this.tracker?.end();
    this.tracker = undefined;
    this.d.onClose(this);
  }

  private attach(t: ServerTracker): void {
    if (this.stopped) {
      t.end();
      return;
    }
    this.tracker = t;
    // Each changeSet follows a full list from the server; rebuild the list from the tracker's view.
    const current = new Map<string, string>();
    t.on("changeSet", (cs: ChangeSet) => {
      for (const d of cs.removed) current.delete(d.id);
      for (const d of [...cs.added, ...cs.changed]) current.set(d.id, d.type);
      this.apply([...current].map(([id, type]) => ({ id, type })));
    });
    t.on("error", (e: Error) => this.lost(t, e.message));
    t.on("end", () => this.lost(t, "end"));
  }

  /** The connection `t` ended: report everything gone and reconnect (unless it was replaced or we stopped). */
  private lost(t: ServerTracker, why: string): void {
    if (this.tracker !== t) return;
    this.tracker = undefined;
    if (this.stopped) return;
    this.d.cfg.logger.warn({ event: "adb:tracker-lost", why }, "device tracker lost the adb server; retrying");
    // A server that went away took every transport with it (a restarted server starts empty).
    this.apply([]);
    this.retry = setTimeout(() => this.start(), this.d.retryMs);
  }

  /** The server's full list now → add / change / remove against what we knew. */
  private apply(list: AdbkitDevice[]): void {
    const seen = new Set<string>();
    for (const d of list) {
      seen.add(d.id);
      const prev = this.known.get(d.id);
      if (prev === d.type) continue;
      this.known.set(d.id, d.type);
      this.emit({ kind: prev === undefined ? "add" : "change", serial: d.id, state: d.type });
    }
    for (const serial of [...this.known.keys()]) {
      if (seen.has(serial)) continue;
      this.known.delete(serial);
      this.emit({ kind: "remove", serial, state: "gone" });
    }
  }

  private emit(ev: DeviceChange): void {
    try {
      this.d.cfg.events.onDeviceState?.({ serial: ev.serial, state: ev.kind === "remove" ? "gone" : ev.state });
    } catch {
      // metrics hooks never break tracking
    }
    this.d.cfg.logger.info({ event: `adb:device-${ev.kind}`, serial: ev.serial, state: ev.state }, "device tracker");
    try {
      this.d.listener(ev);
    } catch (e) {
      this.d.cfg.logger.error({ event: "adb:tracker-listener-error", err: String(e) }, "device listener threw");
    }
  }
}
