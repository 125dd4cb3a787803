/** Byte plumbing shared by the shell and the commands: sinks, stdin helpers, abortable sleep. */

export type Chunk = Uint8Array | string;
export type Sink = (chunk: Chunk) => void;

/** What `SimAndroid.run` is given by the transport: one ADB shell stream. */
export interface ShellIO {
  /** stdout */
  write(chunk: Uint8Array | string): void;
  /** stderr */
  writeErr(chunk: Uint8Array | string): void;
  /** Host data for this stream; ends at EOF / close-stdin. */
  stdin: AsyncIterable<Uint8Array>;
  /** Aborted when the host closes the stream; long-running commands (logcat) must stop. */
  signal: AbortSignal;
}

/** The file descriptors one command sees after redirections. */
export interface CommandIO {
  out: Sink;
  err: Sink;
  stdin: AsyncIterable<Uint8Array>;
  signal: AbortSignal;
}

export const nullSink: Sink = () => {};

export const emptyStdin: AsyncIterable<Uint8Array> = {
  async *[Symbol.asyncIterator]() {},
};

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function toBytes(chunk: Chunk): Uint8Array {
  return typeof chunk === "string" ? encoder.encode(chunk) : chunk;
}

export function bytesToText(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  let total = 0;
  for (const p of parts) total += p.length;
  const out = new Uint8Array(total);
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

/** Reads stdin to its end, or until `limit` bytes when given (`cmd package install -S <size>`). */
export async function readStdin(stdin: AsyncIterable<Uint8Array>, signal: AbortSignal, limit?: number): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let total = 0;
  if (limit === 0) return new Uint8Array(0);
  for await (const chunk of stdin) {
    if (signal.aborted) break;
    parts.push(chunk);
    total += chunk.length;
    if (limit !== undefined && total >= limit) break;
  }
  const all = concatBytes(parts);
  return limit !== undefined && all.length > limit ? all.subarray(0, limit) : all;
}

/** Splits stdin into text lines (without the newline); a final unterminated line is yielded too. */
export async function* stdinLines(stdin: AsyncIterable<Uint8Array>, signal: AbortSignal): AsyncGenerator<string> {
  const dec = new TextDecoder();
  let pending = "";
  for await (const chunk of stdin) {
    if (signal.aborted) return;
    pending += dec.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = pending.indexOf("\n")) >= 0) {
      yield pending.slice(0, nl);
      pending = pending.slice(nl + 1);
    }
  }
  pending += dec.decode();
  if (pending.length > 0) yield pending;
}

/** Sleeps `ms`, returning early (without throwing) when `signal` aborts: the farm's one sleep, under the shell's name. */
export { sleep as sleepMs } from "@farm/time";

/** Resolves when `signal` aborts (never, if it never does). */
export function untilAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}
