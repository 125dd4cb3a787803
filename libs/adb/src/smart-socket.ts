/**
 * The adb server's smart-socket protocol on a plain socket, for the calls made often enough that adbkit's
 * per-call machinery shows in the worker's CPU: a request is its length in 4 hex digits and the text; the
 * server answers `OKAY`, or `FAIL` + 4 hex digits + a message. `openService` does the handshake of a device
 * service (`host:transport:<serial>`, then the service) for the shell and the framebuffer capture.
 */
import net from "node:net";

export const smartRequest = (text: string): Buffer => Buffer.from(Buffer.byteLength(text, "utf8").toString(16).padStart(4, "0") + text, "utf8");

export type SmartStatus = { ok: true; rest: Buffer } | { ok: false; message: string };

/** The server's status at the start of `pending` (and what follows it), or undefined while incomplete. */
export function takeStatus(pending: Buffer): SmartStatus | undefined {
  if (pending.length < 4) return undefined;
  const tag = pending.toString("latin1", 0, 4);
  if (tag === "OKAY") return { ok: true, rest: pending.subarray(4) };
  if (tag !== "FAIL") return { ok: false, message: `unexpected reply ${JSON.stringify(tag)}` };
  if (pending.length < 8) return undefined;
  const hex = pending.toString("latin1", 4, 8);
  if (!/^[0-9a-fA-F]{4}$/.test(hex)) return { ok: false, message: `malformed FAIL length ${JSON.stringify(hex)}` };
  const len = parseInt(hex, 16);
  if (pending.length < 8 + len) return undefined;
  return { ok: false, message: pending.toString("utf8", 8, 8 + len) };
}

export interface ServiceHandlers {
  /** The service runs: from now on the socket carries its data both ways. */
  started(): void;
  /** The service's data, in order. */
  data(b: Buffer): void;
  /**
   * The server refused the device (`transport`) or the service (`service`) with its message, or the socket
   * failed or closed before the service started (`socket`; a close is a PrematureEOFError).
   */
  failed(e: Error, stage: "transport" | "service" | "socket"): void;
  /** The service's stream ended (after it started). */
  ended(): void;
}

/** Connects to the adb server at host:port and starts `service` (e.g. `shell:sh`, `framebuffer:`) on `serial`; the socket is the caller's to write (once started) and destroy. */
export function openService(host: string, port: number, serial: string, service: string, h: ServiceHandlers): net.Socket {
  const sock = net.connect(port, host);
  // A caller writes short requests and waits for their answer: no Nagle delay on them.
  sock.setNoDelay(true);
  let stage: "transport" | "service" | "started" | "done" = "transport";
  let pending: Buffer = Buffer.alloc(0);
  const fail = (e: Error, at: "transport" | "service" | "socket"): void => {
    if (stage === "done") return;
    stage = "done";
    sock.destroy();
    h.failed(e, at);
  };
  sock.on("connect", () => sock.write(smartRequest(`host:transport:${serial}`)));
  sock.on("data", (b: Buffer) => {
    if (stage === "started") return h.data(b);
    pending = pending.length ? Buffer.concat([pending, b]) : b;
    while (stage === "transport" || stage === "service") {
      const s = takeStatus(pending);
      if (!s) return;
      if (!s.ok) return fail(new Error(s.message), stage);
      pending = s.rest;
      if (stage === "transport") {
        stage = "service";
        sock.write(smartRequest(service));
      } else {
        stage = "started";
        h.started();
      }
    }
    if (stage === "started" && pending.length) h.data(pending);
    pending = Buffer.alloc(0);
  });
  sock.on("error", (e) => fail(e, "socket"));
  sock.on("close", () => {
    if (stage === "started") {
      stage = "done";
      h.ended();
    } else fail(Object.assign(new Error("Premature end of stream before the service started"), { name: "PrematureEOFError" }), "socket");
  });
  return sock;
}
