/**
 * The adbkit client, and per-call device handles whose server connections are remembered so a
 * deadline can destroy them (adbkit itself has no per-call timeout or cancellation).
 */
import adbkit from "@devicefarmer/adbkit";
import type { Duplex } from "node:stream";
import type { ResolvedAdbConfig } from "./config.ts";
import { DeadlineError } from "./result.ts";

const { Adb } = adbkit;

export type AdbClient = ReturnType<typeof Adb.createClient>;
export type AdbDeviceClient = ReturnType<AdbClient["getDevice"]>;
type Connection = Awaited<ReturnType<AdbClient["connection"]>>;

/**
 * adbkit runs `<bin> -P <port> start-server` when the server port refuses a connection. The farm
 * never starts, kills or restarts a shared adb server, so `bin` is a command that does nothing and fails.
 */
const NEVER_START_SERVER_BIN = "false";

export function createAdbClient(cfg: Pick<ResolvedAdbConfig, "host" | "port">): AdbClient {
  return Adb.createClient({ host: cfg.host, port: cfg.port, bin: NEVER_START_SERVER_BIN });
}

/** A device handle for one call; `destroy()` tears down every server connection it opened. */
export interface CallHandle {
  readonly dc: AdbDeviceClient;
  destroy(): void;
}

/** Hands out server connections from `open`, remembering each so `destroy()` can tear them all down (later ones too). */
function connectionTracker(open: () => PromiseLike<Connection>): { connection: () => PromiseLike<Connection>; destroy(): void } {
  const conns: Connection[] = [];
  let destroyed = false;
  const kill = (c: Connection) => (c.socket as { destroy?: () => void } | undefined)?.destroy?.();
  return {
    connection: () =>
      open().then((c) => {
        conns.push(c);
        if (destroyed) kill(c);
        return c;
      }),
    destroy() {
      destroyed = true;
      for (const c of conns) kill(c);
    },
  };
}

export function callHandle(client: AdbClient, serial: string): CallHandle {
  const dc = client.getDevice(serial);
  const t = connectionTracker(() => client.connection());
  // DeviceClient.transport() and syncService() obtain their connection through this method.
  (dc as unknown as { connection: () => unknown }).connection = t.connection;
  return { dc, destroy: t.destroy };
}

/** A view of the client whose server connections are remembered, for host-level calls (`host:devices`…). */
export function trackedClient(client: AdbClient): { client: AdbClient; destroy(): void } {
  const t = connectionTracker(() => client.connection());
  const derived = Object.create(client) as AdbClient;
  (derived as unknown as { connection: () => unknown }).connection = t.connection;
  return { client: derived, destroy: t.destroy };
}

/**
 * Starts `start()` (whose server connections belong to `h`) and races it against the deadline. On expiry
 * (DeadlineError) or failure `h.destroy()` releases those connections; a call abandoned at the deadline may
 * reject later, which is never left unhandled.
 */
export function underDeadline<T>(h: { destroy(): void }, timeoutMs: number, op: string, start: () => PromiseLike<T>): Promise<T> {
  let work: PromiseLike<T>;
  try {
    work = start();
  } catch (e) {
    work = Promise.reject(e);
  }
  Promise.resolve(work).catch(() => undefined);
  return withDeadline(work, timeoutMs, op, () => h.destroy()).catch((e: unknown) => {
    h.destroy();
    throw e;
  });
}

/** Races `work` against a timer; on expiry calls `onExpire` (which must release resources) and rejects with DeadlineError. */
function withDeadline<T>(work: PromiseLike<T>, timeoutMs: number, op: string, onExpire: () => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      try {
        onExpire();
      } finally {
        reject(new DeadlineError(op, timeoutMs));
      }
    }, timeoutMs);
    Promise.resolve(work).then(
      (v) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

/** Reads a stream to its end. */
export function readAll(stream: Duplex): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      resolve(Buffer.concat(chunks));
    };
    stream.on("data", (b: Buffer) => chunks.push(b));
    stream.once("end", finish);
    stream.once("close", finish);
    stream.once("error", (e) => {
      if (done) return;
      done = true;
      reject(e);
    });
  });
}
