/**
 * `shell:<command>` on a plain socket (`openService` of @farm/adb-wire), then the output
 * until the device closes the stream. Why not adbkit: measured here, an adbkit shell call costs the worker ~0.7 ms
 * of CPU (its connection, command and promise machinery), which made a task's reset steps (a shell call each)
 * the largest per-episode cost of the worker; this is a socket, two writes and the reads.
 */
import { openService } from "@farm/adb-wire";

/** More output than any command the farm runs produces: a device that streams without end is cut off. */
export const MAX_SHELL_OUTPUT_BYTES = 64 * 1024 * 1024;

export interface ShellSocket {
  /** The whole output; rejects with the server's FAIL message, the socket's error (with its code) or an early end. */
  readonly output: Promise<Buffer>;
  /** Drops the connection (the deadline passed); `output` rejects if it had not settled. */
  destroy(): void;
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
  return serviceOutput(host, port, serial, `shell:${command}`);
}

/** Any device service (`shell:…`, `exec:…`) read to its end, up to MAX_SHELL_OUTPUT_BYTES. */
export function serviceOutput(host: string, port: number, serial: string, service: string): ShellSocket {
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
  const sock = openService({ host, port }, serial, service, {
    started: () => undefined,
    data: (b) => {
      if (!out.push(b)) finish(outputTooLong());
    },
    failed: (e) => finish(e),
    ended: () => finish(),
  });
  return { output, destroy: () => finish(new Error("connection dropped at the deadline")) };
}
