/**
 * `shell:<command>` on a plain socket (smart-socket.ts): `host:transport:<serial>`, `shell:…`, then the output
 * until the device closes the stream. Why not adbkit: measured here, an adbkit shell call costs the worker ~0.7 ms
 * of CPU (its connection, command and promise machinery), which made a task's reset steps (a shell call each)
 * the largest per-episode cost of the worker; this is a socket, two writes and the reads.
 */
import net from "node:net";
import { smartRequest, takeStatus } from "./smart-socket.ts";

/** More output than any command the farm runs produces: a device that streams without end is cut off. */
export const MAX_SHELL_OUTPUT_BYTES = 64 * 1024 * 1024;

export interface ShellSocket {
  /** The whole output; rejects with the server's FAIL message, the socket's error (with its code) or an early end. */
  readonly output: Promise<Buffer>;
  /** Drops the connection (the deadline passed); `output` rejects if it had not settled. */
  destroy(): void;
}

export interface ShellStreamHandlers {
  /** The shell runs: from now on the socket carries its stdin and output. */
  started(): void;
  /** Output of the shell, in order. */
  data(b: Buffer): void;
  /** The server refused (FAIL), the socket failed, or it closed before the shell started. */
  failed(e: Error): void;
  /** The shell's stream ended (after it started). */
  ended(): void;
}

/** Connects to the adb server and starts `shell:<command>` on `serial`; the socket is the caller's to write (once started) and destroy. */
export function startShell(host: string, port: number, serial: string, command: string, h: ShellStreamHandlers): net.Socket {
  const sock = net.connect(port, host);
  let stage: "transport" | "shell" | "output" | "done" = "transport";
  let pending: Buffer = Buffer.alloc(0);
  const fail = (e: Error): void => {
    if (stage === "done") return;
    stage = "done";
    sock.destroy();
    h.failed(e);
  };
  sock.on("connect", () => sock.write(smartRequest(`host:transport:${serial}`)));
  sock.on("data", (b: Buffer) => {
    if (stage === "output") return h.data(b);
    pending = pending.length ? Buffer.concat([pending, b]) : b;
    while (stage === "transport" || stage === "shell") {
      const s = takeStatus(pending);
      if (!s) return;
      if (!s.ok) return fail(new Error(s.message));
      pending = s.rest;
      if (stage === "transport") {
        stage = "shell";
        sock.write(smartRequest(`shell:${command}`));
      } else {
        stage = "output";
        h.started();
      }
    }
    if (stage === "output" && pending.length) h.data(pending);
    pending = Buffer.alloc(0);
  });
  sock.on("error", (e) => fail(e));
  sock.on("close", () => {
    if (stage === "output") {
      stage = "done";
      h.ended();
    } else fail(Object.assign(new Error("Premature end of stream before the shell started"), { name: "PrematureEOFError" }));
  });
  return sock;
}

/** Collects output up to MAX_SHELL_OUTPUT_BYTES. */
export class OutputBuffer {
  private readonly chunks: Buffer[] = [];
  size = 0;

  /** false when the output went over the limit (nothing more is kept). */
  push(b: Buffer): boolean {
    this.size += b.length;
    if (this.size > MAX_SHELL_OUTPUT_BYTES) return false;
    this.chunks.push(b);
    return true;
  }

  get bytes(): Buffer {
    return this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size);
  }
}

export const outputTooLong = (): Error => new Error(`shell output over ${MAX_SHELL_OUTPUT_BYTES} bytes; cut off`);

/** One `shell:<command>` read to its end. */
export function shellSocket(host: string, port: number, serial: string, command: string): ShellSocket {
  let settle!: { resolve(b: Buffer): void; reject(e: Error): void };
  const output = new Promise<Buffer>((resolve, reject) => (settle = { resolve, reject }));
  const out = new OutputBuffer();
  let done = false;
  const finish = (e?: Error): void => {
    if (done) return;
    done = true;
    if (e) {
      sock.destroy();
      settle.reject(e);
    } else settle.resolve(out.bytes);
  };
  const sock = startShell(host, port, serial, command, {
    started: () => undefined,
    data: (b) => {
      if (!out.push(b)) finish(outputTooLong());
    },
    failed: (e) => finish(e),
    ended: () => finish(),
  });
  return { output, destroy: () => finish(new Error("connection dropped at the deadline")) };
}
