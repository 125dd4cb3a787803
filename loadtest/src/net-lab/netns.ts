/**
 * Linux network namespaces and veth links through `ip` (iproute2), for the network lab. Every name the
 * lab makes starts with `flab<run id>` so a later run can find and remove what a dead run left behind.
 * Arguments go to `ip` as an argv (execFile), never through a shell.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { FarmError, coerceError } from "@farm/errors";

const run = promisify(execFile);

export const LAB_PREFIX = "flab";

export class NetLabError extends FarmError {
  constructor(message: string) {
    super("NET_LAB", message);
  }
}

/** Runs `ip …args`; a failure names the command and what `ip` printed. */
export async function ip(...args: string[]): Promise<string> {
  try {
    const { stdout } = await run("ip", args, { timeout: 10_000 });
    return stdout;
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new NetLabError(`ip ${args.join(" ")}: ${(err.stderr || err.message).trim()}`);
  }
}

/** What a root-only test's skip reason starts with: under root such a skip fails the suite (.ci/root-skips-reporter.mjs). */
export const ROOT_ONLY = "[root-only]";

/**
 * Why namespaces cannot be made here, or undefined when they can (root, iproute2, a kernel that allows it); marked
 * ROOT_ONLY, so a test skipped with it counts as a failure when the suite runs as root.
 */
export async function labUnavailableReason(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return `${ROOT_ONLY} the network lab needs root (ip netns add)`;
  const probe = `${LAB_PREFIX}probe${process.pid}`;
  try {
    await ip("netns", "add", probe);
    await ip("netns", "del", probe);
    return undefined;
  } catch (e) {
    return `${ROOT_ONLY} cannot make a network namespace: ${coerceError(e).message} (Debian: apt-get install iproute2; run as root)`;
  }
}

export async function listNamespaces(): Promise<string[]> {
  const out = await ip("netns", "list");
  return out.split("\n").map((l) => l.trim().split(/\s+/)[0] ?? "").filter((n) => n.length > 0);
}

/**
 * Removes the namespaces of lab runs whose owning process is gone (its pid is in the name), so a run
 * that died (kill -9, a lost session) does not leave links behind. Veth pairs go with their namespace.
 */
export async function removeStaleLabs(alive: (pid: number) => boolean = pidAlive): Promise<string[]> {
  const removed: string[] = [];
  for (const ns of await listNamespaces()) {
    const m = /^flab(\d+)x[0-9a-f]+-/.exec(ns);
    if (!m || alive(Number(m[1]))) continue;
    // Processes the dead run left inside (redis-server, a host) would keep the namespace alive.
    const pids = await ip("netns", "pids", ns).catch(() => "");
    for (const pid of pids.split(/\s+/).filter(Boolean)) {
      try {
        process.kill(Number(pid), "SIGKILL");
      } catch {
        // already gone
      }
    }
    await ip("netns", "del", ns).catch(() => undefined);
    removed.push(ns);
  }
  return removed;
}

/** Whether a process with `pid` runs (EPERM: it does, as another user's). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}
