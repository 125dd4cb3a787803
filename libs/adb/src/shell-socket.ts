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

export function shellSocket(host: string, port: number, serial: string, command: string): ShellSocket {
  const sock = net.connect(port, host);
  let stage: "transport" | "shell" | "output" | "done" = "transport";
  let pending: Buffer = Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let size = 0;
  let settle!: { resolve(b: Buffer): void; reject(e: Error): void };
  const output = new Promise<Buffer>((resolve, reject) => (settle = { resolve, reject }));
  const fail = (e: Error): void => {
    if (stage === "done") return;
    stage = "done";
    sock.destroy();
    settle.reject(e);
  };
  const take = (b: Buffer): void => {
    size += b.length;
    if (size > MAX_SHELL_OUTPUT_BYTES) fail(new Error(`shell output over ${MAX_SHELL_OUTPUT_BYTES} bytes; cut off`));
    else chunks.push(b);
  };
  sock.on("connect", () => sock.write(smartRequest(`host:transport:${serial}`)));
  sock.on("data", (b: Buffer) => {
    if (stage === "output") return take(b);
    pending = pending.length ? Buffer.concat([pending, b]) : b;
    while (stage === "transport" || stage === "shell") {
      const s = takeStatus(pending);
      if (!s) return;
      if (!s.ok) return fail(new Error(s.message));
      pending = s.rest;
      if (stage === "shell") stage = "output";
      else {
        stage = "shell";
        sock.write(smartRequest(`shell:${command}`));
      }
    }
    if (stage === "output" && pending.length) take(pending);
    pending = Buffer.alloc(0);
  });
  sock.on("error", (e) => fail(e));
  sock.on("close", () => {
    if (stage === "output") {
      stage = "done";
      settle.resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    } else fail(Object.assign(new Error("Premature end of stream before the shell started"), { name: "PrematureEOFError" }));
  });
  return { output, destroy: () => fail(new Error("connection dropped at the deadline")) };
}
