/**
 * `DeviceTracker`: one follower of the adb server's `host:track-devices`, reporting `add` (any state,
 * including offline), `change` (state changed) and `remove` against what it knew. When the server goes away
 * every known device is reported removed and the tracker keeps reconnecting; on reconnection it reports the
 * difference to what it knew. `AdbDriver.trackDevices` makes one.
 */
import { trackDeviceLists, type DeviceListTracking } from "@farm/adb-wire";
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

interface ListedDevice {
  id: string;
  type: string;
}

export interface DeviceTrackerDeps {
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
  private tracker: DeviceListTracking | undefined;
  private retry: NodeJS.Timeout | undefined;

  constructor(private readonly d: DeviceTrackerDeps) {}

  /** Connects (and keeps reconnecting until `close()`). */
  start(): void {
    if (this.stopped || this.d.ownerClosed()) return;
    const { host, port } = this.d.cfg;
    const t: DeviceListTracking = trackDeviceLists(
      { host, port },
      {
        // Each message is the server's whole list.
        list: (devices) => this.apply([...devices].map(([id, type]) => ({ id, type }))),
        ended: (e, started) => this.lost(t, started ? e.message : undefined, e),
      },
    );
    this.tracker = t;
  }

  devices(): DeviceListEntry[] {
    return [...this.known].map(([serial, state]) => ({ serial, state }));
  }

  close(): void {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    this.tracker?.close();
    this.tracker = undefined;
    this.d.onClose(this);
  }

  /**
   * The connection `t` ended (`why` set when it had been accepted, else it never connected): report everything gone
   * and reconnect (unless it was replaced or we stopped).
   */
  private lost(t: DeviceListTracking, why: string | undefined, e: Error): void {
    if (this.tracker !== t) return;
    this.tracker = undefined;
    if (this.stopped) return;
    const { host, port, logger } = this.d.cfg;
    if (why !== undefined) logger.warn({ event: "adb:tracker-lost", why }, "device tracker lost the adb server; retrying");
    else logger.warn({ event: "adb:tracker-connect-failed", message: describeError(e, { host, port }).message }, "device tracker could not connect; retrying");
    // A server that went away took every transport with it (a restarted server starts empty).
    this.apply([]);
    this.retry = setTimeout(() => this.start(), this.d.retryMs);
  }

  /** The server's full list now → add / change / remove against what we knew. */
  private apply(list: ListedDevice[]): void {
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
