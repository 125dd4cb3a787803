/** Test helpers: run a command line against a SimAndroid and collect its output. */
import { SimAndroid, type ShellIO } from "../src/android/index.ts";
import { appFactoryFor } from "../src/apps/registry.ts";

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
  return new SimAndroid({ serial: "emulator-5600", seed, apps: appFactoryFor, ...extra });
}

/** The canonical parsing regexes of task-format.md §6.2 and §8.4, for shape tests. */
export const LOGCAT_EPOCH_LINE = /^[ ]+(?<timestamp>[0-9]+\.[0-9]+)[ ]+(?<pid>[0-9]+)[ ]+(?<tid>[0-9]+)[ ]+(?<priority>.)[ ]+(?<tag>[^:]*):[ ](?<message>.*)$/;
export const PIN_LINE = /^\ *taskId=(?<id>[0-9]*): (?<base_activity>[^\s]*) .*visible=true.*topActivity=ComponentInfo{(?<top_activity>[^\s]*)}$/;

/** Messages of `logcat -d -v epoch AndroidRLTask:V *:S`. */
export async function rlMessages(device: SimAndroid): Promise<string[]> {
  const r = await sh(device, "logcat -d -v epoch AndroidRLTask:V *:S");
  return r.out
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => LOGCAT_EPOCH_LINE.exec(l)?.groups?.message ?? `<unparsed: ${l}>`);
}

export const APK_DIR = new URL("../../../tasks/apks/", import.meta.url);

/** Pushes a prebuilt APK to /data/local/tmp and installs it with `pm install -r -t -g`. */
export async function installPrebuilt(device: SimAndroid, file: string): Promise<void> {
  const { readFileSync } = await import("node:fs");
  const bytes = readFileSync(new URL(file, APK_DIR));
  device.fs.write(`/data/local/tmp/${file}`, bytes, 0o100644, 1_700_000_000);
  const r = await sh(device, `pm install -r -t -g /data/local/tmp/${file}`);
  if (r.out !== "Success\n") throw new Error(`install of ${file} failed: ${r.out}${r.err}`);
}

/** The shell line AndroidEnv sends for start_activity with RL extras (textproto `'"…"'` quoting already removed by the textproto layer). */
export function rlStartLine(component: string, config: string, opts: { forceStop?: boolean } = {}): string {
  const escaped = config.replace(/\\/g, "\\\\").replace(/"/g, '\\"');
  return `am start ${opts.forceStop ? "-S " : ""}-W -n ${component} --ez "RL_TASK_ENABLED" "true" --es "RL_TASK_GAME_CONFIG" "${escaped}"`;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
