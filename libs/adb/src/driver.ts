/**
 * The driver: one adb server (host, port), device discovery and tracking (@farm/adb-wire), and
 * `Device` handles. It never starts, kills or restarts the adb server (AndroidEnv does; on a shared
 * server that breaks every other emulator on the host).
 */
import { FrameThreads } from "./frame-threads.ts";
import { ShellSessions } from "./shell-session.ts";
import { GrpcEndpoints, type GrpcTransportConfig } from "./grpc/endpoints.ts";
import { listDevices } from "@farm/adb-wire";
import { createAdbClient, underDeadline, type AdbClient } from "./client.ts";
import { resolveConfig, type AdbDriverConfig, type ResolvedAdbConfig } from "./config.ts";
import { AdbDevice, type ActionChannelFactory } from "./device.ts";
import { DeviceTracker, type DeviceChange, type DeviceListEntry, type DeviceTracking } from "./device-tracker.ts";
import { report } from "./exec.ts";
import { describeError } from "./result.ts";
import { resolveLimits, type A11yConfig } from "./a11y/read-tree.ts";

export type { DeviceChange, DeviceListEntry, DeviceTracking };

export interface AdbDriverOptions extends AdbDriverConfig {
  /** Replaces the shell-stream action channel (e.g. with the emulator's gRPC); return undefined to keep the default. */
  actionChannelFactory?: ActionChannelFactory;
  /** Delay before the device tracker reconnects after losing the server. Default 500. */
  trackerRetryMs?: number;
  /** Threads that capture and encode frames off the event loop (`Device.frame`). Default: one per spare core, at most 2. */
  frameThreads?: number;
  /** The emulator gRPC transport: actions and frames over gRPC for devices that have an endpoint. Default off. */
  grpc?: GrpcTransportConfig;
  /** Screen trees (`Device.screenTree`): the forwarder hub, size bounds, deadline. Default: uiautomator only. */
  a11y?: A11yConfig;
}

export class AdbDriver {
  readonly config: ResolvedAdbConfig;
  private readonly client: AdbClient;
  private readonly trackings = new Set<DeviceTracker>();
  private closed = false;
  private readonly frameThreads: FrameThreads;
  /** Which devices have an emulator gRPC endpoint (config, discovery files, or off). */
  readonly grpc: GrpcEndpoints;
  /** A long-lived shell per device for shell commands (shell-session.ts). */
  private readonly shells: ShellSessions;

  constructor(private readonly opts: AdbDriverOptions = {}) {
    this.config = resolveConfig(opts);
    this.client = createAdbClient(this.config);
    if (opts.frameThreads !== undefined && !(Number.isSafeInteger(opts.frameThreads) && opts.frameThreads >= 1)) throw new TypeError(`adb config: frameThreads must be a positive integer, got ${opts.frameThreads}`);
    this.frameThreads = new FrameThreads(opts.frameThreads, (endpoint, reason) =>
      this.config.logger.warn({ event: "adb:shared-frames-off", endpoint, reason }, "frames from this emulator come in the gRPC answer, not through shared memory"),
    );
    this.grpc = new GrpcEndpoints(opts.grpc);
    resolveLimits(opts.a11y);
    this.shells = new ShellSessions(this.config.host, this.config.port);
  }

  /** Devices on the server now; trouble comes back as `{ status, message }`. */
  async listDevices(timeoutMs = this.config.queryTimeoutMs): Promise<DeviceListEntry[] | { status: "adb_error" | "timeout"; message: string }> {
    const t0 = performance.now();
    const ac = new AbortController();
    const server = { host: this.config.host, port: this.config.port };
    try {
      const list = await underDeadline({ destroy: () => ac.abort() }, timeoutMs, `listing devices on adb server ${server.host}:${server.port}`, () => listDevices(server, { timeoutMs, signal: ac.signal }));
      report({ cfg: this.config }, "devices", "ok", performance.now() - t0);
      return [...list].map(([serial, state]) => ({ serial, state }));
    } catch (e) {
      const d = describeError(e, { host: this.config.host, port: this.config.port });
      report({ cfg: this.config }, "devices", d.status, performance.now() - t0, d.message);
      return { status: d.status === "timeout" ? "timeout" : "adb_error", message: d.message };
    }
  }

  /** Follows the server's device list (device-tracker.ts): add / change / remove, reconnecting until `close()`. */
  trackDevices(listener: (ev: DeviceChange) => void): DeviceTracking {
    const tracker = new DeviceTracker({
      cfg: this.config,
      retryMs: this.opts.trackerRetryMs ?? 500,
      listener,
      ownerClosed: () => this.closed,
      onClose: (t) => this.trackings.delete(t),
    });
    this.trackings.add(tracker);
    tracker.start();
    return tracker;
  }

  /** A handle for one device (cheap; nothing is opened until it is used). */
  device(serial: string): AdbDevice {
    if (serial === "") throw new TypeError("device serial is empty");
    return new AdbDevice({ client: this.client, cfg: this.config, serial, frameThreads: this.frameThreads, grpc: this.grpc, shells: this.shells }, this.opts.actionChannelFactory, this.opts.a11y);
  }

  /** Stops trackers and the shell sessions. Devices' action channels and logcat streams are closed by their owners. */
  async close(): Promise<void> {
    this.closed = true;
    for (const t of [...this.trackings]) t.close();
    this.shells.close();
    await this.frameThreads.close();
  }
}
