/**
 * One host request on its own connection to the adb server, read to its answer under a deadline and an optional
 * AbortSignal; the connection is this module's and is destroyed whatever happens.
 */
import net from "node:net";
import { AdbWireError } from "./errors.ts";
import { encodeRequest, parseDeviceList, takeLengthPrefixed, takeStatus } from "./protocol.ts";

export interface ServerAddress {
  host: string;
  port: number;
}

/**
 * What the server sends back: `okay` (one status: `host:transport:…`), `okay-okay` (a status when accepted and one
 * when done: `wait-for-…`), `payload` (a status and a length-prefixed text: `host:version`, `host:devices`,
 * `host-serial:…:get-state`).
 */
export type Expect = "okay" | "okay-okay" | "payload";

export interface RequestOptions {
  timeoutMs: number;
  signal?: AbortSignal;
}

const where = (a: ServerAddress): string => `adb server ${a.host}:${a.port}`;

/** Turns a socket error into an AdbWireError naming the server and the request. */
export function socketError(a: ServerAddress, request: string, e: NodeJS.ErrnoException): AdbWireError {
  if (e.code === "ECONNREFUSED") return new AdbWireError("unreachable", `no ${where(a)} answers (connection refused) for ${request}`, e.code);
  return new AdbWireError("unreachable", `${where(a)}: ${e.code ?? e.message} during ${request}`, e.code);
}

/** Sends `request` and resolves with its answer: the payload text, or "" for the status-only kinds. */
export function hostRequest(a: ServerAddress, request: string, expect: Expect, opts: RequestOptions): Promise<string> {
  let frame: Buffer;
  try {
    frame = encodeRequest(request);
  } catch (e) {
    return Promise.reject(e);
  }
  return new Promise((resolve, reject) => {
    let pending: Buffer = Buffer.alloc(0);
    let okays = 0;
    let done = false;
    const sock = net.connect(a.port, a.host);
    const finish = (err?: AdbWireError, value = ""): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener("abort", onAbort);
      sock.destroy();
      if (err) reject(err);
      else resolve(value);
    };
    const onAbort = (): void => finish(new AdbWireError("cancelled", `${request} on ${where(a)} cancelled`));
    const timer = setTimeout(() => finish(new AdbWireError("timeout", `${where(a)} did not answer ${request} within ${opts.timeoutMs} ms`)), opts.timeoutMs);
    if (opts.signal?.aborted) return onAbort();
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    sock.setNoDelay(true);
    sock.once("connect", () => sock.write(frame));
    sock.on("error", (e: NodeJS.ErrnoException) => finish(socketError(a, request, e)));
    sock.once("close", () => finish(new AdbWireError("closed", `${where(a)} closed the connection before answering ${request}`)));
    sock.on("data", (b: Buffer) => {
      pending = pending.length ? Buffer.concat([pending, b]) : b;
      while (!done) {
        if (okays < (expect === "okay-okay" ? 2 : 1)) {
          const s = takeStatus(pending);
          if (!s) return;
          if (!s.ok) return finish(new AdbWireError(/^unexpected|^malformed/.test(s.message) ? "protocol" : "refused", `${where(a)} refused ${request}: ${s.message}`));
          okays++;
          pending = s.rest;
          continue;
        }
        if (expect !== "payload") return finish();
        const p = takeLengthPrefixed(pending);
        if (!p) return;
        if ("error" in p) return finish(new AdbWireError("protocol", `${where(a)} answered ${request} with a bad length ${p.error}`));
        return finish(undefined, p.text);
      }
    });
  });
}

/** `host:version`: the server's protocol version (41 for adb 29–35). */
export async function serverVersion(a: ServerAddress, opts: RequestOptions): Promise<number> {
  const hex = await hostRequest(a, "host:version", "payload", opts);
  const v = parseInt(hex, 16);
  if (!/^[0-9a-fA-F]+$/.test(hex)) throw new AdbWireError("protocol", `${where(a)} answered host:version with ${JSON.stringify(hex.slice(0, 20))}`);
  return v;
}

/** `host:devices`: serial → state (`device`, `offline`, `unauthorized`…). */
export async function listDevices(a: ServerAddress, opts: RequestOptions): Promise<Map<string, string>> {
  return parseDeviceList(await hostRequest(a, "host:devices", "payload", opts));
}

/** `host-serial:<serial>:get-state`: the device's state; a device the server does not know is a `refused` error. */
export async function deviceState(a: ServerAddress, serial: string, opts: RequestOptions): Promise<string> {
  return (await hostRequest(a, `host-serial:${serial}:get-state`, "payload", opts)).trim();
}

/** `host-serial:<serial>:wait-for-any-device`: resolves once the server lists the device as `device`. */
export async function waitForDevice(a: ServerAddress, serial: string, opts: RequestOptions): Promise<void> {
  await hostRequest(a, `host-serial:${serial}:wait-for-any-device`, "okay-okay", opts);
}

/**
 * `host:emulator:<port>`: asks the server to attach the emulator whose adb port is `devicePort`. The server never
 * answers this request (it closes the socket and connects to 127.0.0.1:port). Resolves true once the request
 * was written, false when no server took it within `timeoutMs`.
 */
export function registerEmulator(a: ServerAddress, devicePort: number, timeoutMs = 1000): Promise<boolean> {
  const frame = encodeRequest(`host:emulator:${devicePort}`);
  return new Promise((resolve) => {
    const sock = net.connect(a.port, a.host);
    let delivered = false;
    const finish = (): void => {
      clearTimeout(timer);
      sock.destroy();
      resolve(delivered);
    };
    const timer = setTimeout(finish, timeoutMs);
    sock.once("connect", () =>
      sock.write(frame, () => {
        delivered = true;
        sock.end();
      }),
    );
    sock.once("error", finish);
    sock.once("close", finish);
    // Drained, never read: the server sends nothing here.
    sock.on("data", () => undefined);
  });
}
