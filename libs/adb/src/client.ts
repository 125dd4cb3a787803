/**
 * The adbkit client (its public API only: the sync service for push/pull/stat) and the deadline every driver call
 * runs under. Everything else on the adb server's wire goes through @farm/adb-wire on connections the driver owns.
 */
import type adbkit from "@devicefarmer/adbkit";
import { createRequire } from "node:module";
import type { Duplex } from "node:stream";
import type { ResolvedAdbConfig } from "./config.ts";
import { DeadlineError } from "./result.ts";
import { withDeadline } from "@farm/time";

export type AdbClient = ReturnType<typeof adbkit.Adb.createClient>;
export type AdbDeviceClient = ReturnType<AdbClient["getDevice"]>;

/**
 * adbkit runs `<bin> -P <port> start-server` when the server port refuses a connection. The farm
 * never starts, kills or restarts a shared adb server, so `bin` is a command that does nothing and fails.
 */
const NEVER_START_SERVER_BIN = "false";

let adbkitLoaded: typeof adbkit | undefined;

/** adbkit (with bluebird and node-forge) when the first client is made, not at import: most importers make none. */
function loadAdbkit(): typeof adbkit {
  adbkitLoaded ??= createRequire(import.meta.url)("@devicefarmer/adbkit") as typeof adbkit;
  return adbkitLoaded;
}

export function createAdbClient(cfg: Pick<ResolvedAdbConfig, "host" | "port">): AdbClient {
  return loadAdbkit().Adb.createClient({ host: cfg.host, port: cfg.port, bin: NEVER_START_SERVER_BIN });
}

export type AdbSync = Awaited<ReturnType<AdbDeviceClient["syncService"]>>;

/**
 * A sync-service session (push, pull, stat) through adbkit's public API, for one call; `destroy()` ends it (at
 * once, or as soon as adbkit hands it over when the call's deadline passed during the handshake). The handshake's
 * own connection is adbkit's until then: it ends with the server's answer or the socket's error, never later.
 */
export function syncHandle(client: AdbClient, serial: string): { sync(): Promise<AdbSync>; destroy(): void } {
  let destroyed = false;
  let held: AdbSync | undefined;
  return {
    sync: () =>
      Promise.resolve(client.getDevice(serial).syncService()).then((s) => {
        held = s;
        if (destroyed) s.end();
        return s;
      }),
    destroy() {
      destroyed = true;
      held?.end();
    },
  };
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
  // The connections are released once the race is decided, so their closing cannot win it.
  return withDeadline(work, timeoutMs, () => new DeadlineError(op, timeoutMs)).catch((e: unknown) => {
    h.destroy();
    throw e;
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
