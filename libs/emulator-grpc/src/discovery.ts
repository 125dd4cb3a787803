/**
 * The emulator's discovery files, the way a client finds a running emulator's ports and gRPC token:
 * `pid_<pid>.ini` (`key=value` lines) in the running-AVD folder. One rule for the writer (the simulator)
 * and the readers (the farm's gRPC transport, tools).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/**
 * The running-AVD folder as the emulator computes it on Linux: `$XDG_RUNTIME_DIR/avd/running`; without
 * XDG_RUNTIME_DIR the first existing of `/run/user/<uid>` and `$HOME/.android`, else the temp dir.
 */
export function discoveryDirectory(env: Readonly<Record<string, string | undefined>>): string {
  let root = env.XDG_RUNTIME_DIR;
  if (!root) {
    const uid = typeof process.getuid === "function" ? process.getuid() : 0;
    const candidates = [`/run/user/${uid}`, ...(env.HOME ? [path.join(env.HOME, ".android")] : [])];
    root = candidates.find((dir) => fs.existsSync(dir)) ?? os.tmpdir();
  }
  return path.join(root, "avd", "running");
}

/** The pid a discovery file name carries (`pid_N.ini`, or `pid_N_PORT.ini` for a further device of one process). */
export function discoveryFilePid(name: string): number | undefined {
  const m = /^pid_(\d+)(?:_\d+)?\.ini$/.exec(name);
  return m ? Number(m[1]) : undefined;
}

/** Whether process `pid` still runs (a file whose writer is gone is stale). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** A discovery file's `key=value` lines (values kept as written, a CR before the newline dropped). */
export function parseDiscovery(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split("\n")) {
    const eq = line.indexOf("=");
    if (eq > 0) out.set(line.slice(0, eq).trim(), line.slice(eq + 1).replace(/\r$/, ""));
  }
  return out;
}
