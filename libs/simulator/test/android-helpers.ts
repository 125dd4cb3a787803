/** Test helpers: run a command line against a SimAndroid and collect its output. */
import { SimAndroid, type ShellIO } from "../src/android/index.ts";

export interface RunResult {
  code: number;
  out: string;
  err: string;
  bytes: Uint8Array;
}

function stdinOf(data?: Uint8Array | string): AsyncIterable<Uint8Array> {
  return {
    async *[Symbol.asyncIterator]() {
      if (data !== undefined) yield typeof data === "string" ? new TextEncoder().encode(data) : data;
    },
  };
}

/** Runs `line`; `abortAfterMs` aborts the stream (for following commands such as logcat). */
export async function sh(device: SimAndroid, line: string, opts: { stdin?: Uint8Array | string; abortAfterMs?: number; signal?: AbortSignal } = {}): Promise<RunResult> {
  const outParts: Uint8Array[] = [];
  let err = "";
  const ac = new AbortController();
  opts.signal?.addEventListener("abort", () => ac.abort());
  const timer = opts.abortAfterMs !== undefined ? setTimeout(() => ac.abort(), opts.abortAfterMs) : undefined;
  const io: ShellIO = {
    write: (c) => outParts.push(typeof c === "string" ? new TextEncoder().encode(c) : new Uint8Array(c)),
    writeErr: (c) => (err += typeof c === "string" ? c : new TextDecoder().decode(c)),
    stdin: stdinOf(opts.stdin),
    signal: ac.signal,
  };
  const code = await device.run(line, io);
  clearTimeout(timer);
  const bytes = Buffer.concat(outParts);
  return { code, out: new TextDecoder().decode(bytes), err, bytes: new Uint8Array(bytes) };
}

export function newDevice(seed = 1, extra: Partial<ConstructorParameters<typeof SimAndroid>[0]> = {}): SimAndroid {
  return new SimAndroid({ serial: "emulator-5600", seed, ...extra });
}
