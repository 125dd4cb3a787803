import net from "node:net";
import os from "node:os";
import path from "node:path";
import { listenOnFreePort } from "@farm/net-ports";
import { silentLogger, type Logger } from "@farm/log";
import { SimAndroid } from "./android/index.ts";
import { appFactoryFor } from "./apps/registry.ts";
import type { DeviceBackend } from "./transport/backend.ts";
import { DEVICE_PRODUCT, deviceBanner } from "./transport/banner.ts";
import { AdbConnection } from "./transport/connection.ts";
import { registerEmulator } from "@farm/adb-wire";
import { waitListedAsDevice } from "./adb-listing.ts";
import { createServiceRouter } from "./transport/services.ts";
import { DeviceSnapshots } from "./snapshot/device-snapshots.ts";
import { sleep, withDeadline } from "@farm/time";

export type LatencyProfile = "instant" | "emulator-adb" | "emulator-grpc";

export interface SimDeviceOptions {
  adbPort: number;
  adbHost?: string;
  /** The device's own (emulator adb) port; the serial is `emulator-(port-1)`. Default: a free port. */
  port?: number;
  /** false: resolve once listening, and keep registering in the background (an emulator started before its adb server). */
  awaitOnline?: boolean;
  seed?: number;
  screen?: { width: number; height: number };
  latencyProfile?: LatencyProfile;
  /** Largest WRTE payload the device accepts (default 1 MiB, like adbd). */
  maxData?: number;
  /**
   * Folder of this device's snapshots (one sub-folder each); the AVD's `snapshots/` folder when
   * launched from an AVD. Default: `<tmpdir>/farm-sim-snapshots/<serial>` (see defaultSnapshotDir).
   */
  snapshotDir?: string;
  /** Delay of a snapshot load in ms; default from the latency profile (instant 0, emulator 650). */
  snapshotLoadDelayMs?: number;
  logger?: Logger;
}

export interface SimDeviceFaults {
  /** true: the device stops answering (all transport I/O frozen); false: it resumes. */
  hang(on: boolean): void;
  /** Destroys the transport and stays away from the adb server until reconnect(). */
  dropConnection(): void;
  /** Registers with the adb server again after dropConnection(). */
  reconnect(): void;
  setLatencyProfile(name: LatencyProfile): void;
  crashApp(): void;
  setTapDropRate(p: number): void;
}

/** Where a device keeps its snapshots when not told: `<tmpdir>/farm-sim-snapshots/<serial>`. */
export function defaultSnapshotDir(serial: string): string {
  return path.join(os.tmpdir(), "farm-sim-snapshots", serial);
}

const RETRY_MS = 100;
const WAIT_FOR_ATTACH_MS = 250;

/** Listens on a free port outside the reserved ranges, retrying if freePort's pick was taken meanwhile. */
/** Listens on exactly `port` (rejects with the listen error, e.g. EADDRINUSE, when it is taken). */
function listenOn(server: net.Server, port: number): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve(port);
    });
  });
}

/**
 * One simulated emulator: a TCP listener speaking the device side of ADB, registered with an adb
 * server as `emulator-(PORT-1)`, re-registering whenever its transport closes (adb server restart).
 */
export class SimDevice {
  readonly faults: SimDeviceFaults;
  /** Save / load / list / delete snapshots of the whole simulated device. */
  readonly snapshots: DeviceSnapshots;
  /** When the device started (ms since the epoch); gRPC getStatus reports uptime from it. */
  readonly startedAtMs = Date.now();
  /** Resolves once the device has stopped (close(), gRPC setVmState(SHUTDOWN), console `kill`). */
  readonly whenClosed: Promise<void>;
  private resolveClosed!: () => void;
  private readonly connections = new Set<AdbConnection>();
  private readonly onlineWaiters = new Set<() => void>();
  private hung = false;
  private dropped = false;
  private closed = false;
  private registering = false;
  private onlineCount = 0;
  /** The device's listener; closed while dropped so the adb server's reconnect attempts are refused. */
  private listener: net.Server | undefined;
  /** Banner built from the simulated Android's own ro.product.* so `devices -l` matches getprop. */
  private readonly banner: string;
  private readonly router: ReturnType<typeof createServiceRouter>;

  private constructor(
    readonly port: number,
    readonly serial: string,
    readonly android: SimAndroid,
    listener: net.Server,
    private readonly opts: SimDeviceOptions,
    private readonly log: Logger,
  ) {
    this.faults = {
      hang: (on) => this.setHung(on),
      dropConnection: () => this.dropConnection(),
      reconnect: () => this.reconnect(),
      setLatencyProfile: (name) => this.android.faults.setLatencyProfile(name),
      crashApp: () => this.android.faults.crashApp(),
      setTapDropRate: (p) => this.android.faults.setTapDropRate(p),
    };
    const prop = (key: string, fallback: string) => android.system.props.get(key) || fallback;
    this.banner = deviceBanner({
      name: prop("ro.product.name", DEVICE_PRODUCT.name),
      model: prop("ro.product.model", DEVICE_PRODUCT.model),
      device: prop("ro.product.device", DEVICE_PRODUCT.device),
    });
    this.router = createServiceRouter(android satisfies DeviceBackend, () => this.restartAdbd());
    this.snapshots = new DeviceSnapshots({
      dir: opts.snapshotDir ?? defaultSnapshotDir(serial),
      system: android.system,
      loadDelayMs: () => opts.snapshotLoadDelayMs ?? android.system.faults.snapshotLoadMs(),
      logger: log,
    });
    this.whenClosed = new Promise((resolve) => (this.resolveClosed = resolve));
    this.adoptListener(listener);
  }

  /** Starts listening and registers with the adb server; resolves once the server has attached. */
  static async start(opts: SimDeviceOptions): Promise<SimDevice> {
    const server = net.createServer();
    const port = opts.port === undefined ? await listenOnFreePort(server) : await listenOn(server, opts.port);
    const serial = `emulator-${port - 1}`;
    const log = (opts.logger ?? silentLogger).child({ component: "sim-device", serial });
    const android = new SimAndroid({ serial, seed: opts.seed ?? port, apps: appFactoryFor, ...(opts.screen ? { screen: opts.screen } : {}), logger: log });
    if (opts.latencyProfile) android.faults.setLatencyProfile(opts.latencyProfile);
    const device = new SimDevice(port, serial, android, server, opts, log);
    if (opts.awaitOnline === false) {
      device.ensureRegistered();
      return device;
    }
    const online = device.waitOnline(10_000);
    device.ensureRegistered();
    try {
      await online;
      // Online as the device sees it (handshake answered); the adb server may list it offline a moment longer.
      await waitListedAsDevice(opts.adbPort, opts.adbHost ?? "127.0.0.1", [serial], 10_000);
    } catch (e) {
      await device.close();
      throw e;
    }
    return device;
  }

  /** True while an adb server holds a handshaken transport to this device. */
  get isOnline(): boolean {
    return this.onlineCount > 0;
  }

  /** Resolves once an adb server has connected and completed the handshake. */
  waitOnline(timeoutMs: number): Promise<void> {
    if (this.isOnline) return Promise.resolve();
    let done!: () => void;
    const online = new Promise<void>((resolve) => {
      done = () => {
        this.onlineWaiters.delete(done);
        resolve();
      };
      this.onlineWaiters.add(done);
    });
    return withDeadline(online, timeoutMs, () => {
      this.onlineWaiters.delete(done);
      return new Error(`${this.serial} did not come online within ${timeoutMs} ms (adb server on port ${this.opts.adbPort}?)`);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const closing = this.closeListener(); // first, so the server cannot attach again meanwhile
    for (const c of this.connections) c.destroy();
    this.connections.clear();
    await closing;
    this.android.close();
    this.resolveClosed();
  }

  /** True while the device is frozen by faults.hang(true). */
  get isHung(): boolean {
    return this.hung;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private adoptListener(server: net.Server): void {
    this.listener = server;
    server.on("connection", (socket) => this.accept(socket));
    server.on("error", (e) => this.log.warn({ event: "listener:error", err: e.message }, "listener error"));
  }

  private closeListener(): Promise<void> {
    const server = this.listener;
    this.listener = undefined;
    if (!server) return Promise.resolve();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Listens on our port again (after a drop); retries while the port is briefly unavailable. */
  private async reopenListener(): Promise<boolean> {
    for (let attempt = 0; attempt < 50 && !this.closed && !this.dropped; attempt++) {
      const server = net.createServer();
      const ok = await new Promise<boolean>((resolve) => {
        server.once("error", () => resolve(false));
        server.listen(this.port, "127.0.0.1", () => resolve(true));
      });
      if (ok && !this.closed && !this.dropped) {
        this.adoptListener(server);
        return true;
      }
      server.close();
      await sleep(RETRY_MS);
    }
    return false;
  }

  private accept(socket: net.Socket): void {
    if (this.closed || this.dropped) {
      socket.destroy();
      return;
    }
    let online = false;
    const conn = new AdbConnection(socket, {
      banner: this.banner,
      maxData: this.opts.maxData ?? 1024 * 1024,
      router: this.router,
      onOnline: () => {
        if (online) return;
        online = true;
        this.onlineCount++;
        for (const w of [...this.onlineWaiters]) w();
      },
    });
    if (this.hung) conn.setPaused(true);
    this.connections.add(conn);
    socket.once("close", () => {
      this.connections.delete(conn);
      if (online) this.onlineCount--;
      this.log.debug({ event: "transport:closed" }, "transport closed");
      this.ensureRegistered();
    });
  }

  /** adbd restarted (`adb root` / `adb unroot`): the transport drops and the device registers again at once. */
  private restartAdbd(): void {
    if (this.closed || this.dropped) return;
    this.log.info({ event: "adbd:restart", root: this.android.system.shellIsRoot() }, "adbd restarting");
    for (const c of this.connections) c.destroy();
  }

  private setHung(on: boolean): void {
    this.hung = on;
    for (const c of this.connections) c.setPaused(on);
  }

  /**
   * Like an emulator that went away: the listener closes too, because adb 29 keeps reconnecting to an
   * emulator port that still accepts (the entry would flicker `offline` about every 1.25 s).
   */
  private dropConnection(): void {
    if (this.dropped || this.closed) return;
    this.dropped = true;
    void this.closeListener();
    for (const c of this.connections) c.destroy();
  }

  private reconnect(): void {
    if (!this.dropped || this.closed) return;
    this.dropped = false;
    void this.reopenListener().then((ok) => {
      if (ok) this.ensureRegistered();
      else if (!this.closed && !this.dropped) this.log.warn({ event: "reconnect:failed", port: this.port }, "could not listen on the device port again");
    });
  }

  /**
   * While no adb server holds a transport to us, keep asking it to attach (every 100 ms). One loop
   * at a time; it ends as soon as a server connects, or when the device is dropped or closed.
   */
  private ensureRegistered(): void {
    if (this.registering) return;
    this.registering = true;
    const adbHost = this.opts.adbHost ?? "127.0.0.1";
    void (async () => {
      try {
        while (!this.closed && !this.dropped && this.connections.size === 0) {
          const delivered = await registerEmulator({ host: adbHost, port: this.opts.adbPort }, this.port);
          this.log.debug({ event: "register", delivered }, "host:emulator sent");
          const deadline = Date.now() + (delivered ? WAIT_FOR_ATTACH_MS : RETRY_MS);
          while (Date.now() < deadline && this.connections.size === 0 && !this.closed && !this.dropped) {
            await sleep(20);
          }
        }
      } finally {
        this.registering = false;
      }
    })();
  }
}
