/**
 * One lab at a time on a machine: every lab puts the same addresses (the control link's 10.231.0.1/30, a
 * lab cluster's 10.232.0.0/16 route) into the machine's own namespace, so two at once (two test files run
 * side by side, a bench during the tests) would take each other's routes. A lab holds an exclusive lock
 * file naming its pid while it lives; the next waits, bounded; a lock whose process is gone is taken over.
 */
import { readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { sleep } from "@farm/time";
import { NetLabError, pidAlive } from "./netns.ts";
import { coerceError } from "@farm/errors";

export const LAB_LOCK_PATH = "/run/lock/farm-net-lab.lock";

function holderPid(path: string): number | undefined {
  try {
    const pid = Number(readFileSync(path, "utf8").split(" ")[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Takes the lock for `runId`, waiting up to `timeoutMs` for another lab to close; a release function. */
export async function acquireLabLock(runId: string, timeoutMs = 600_000, path = LAB_LOCK_PATH): Promise<() => void> {
  const token = `${process.pid} ${runId}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      writeFileSync(path, token, { flag: "wx" });
      return () => {
        // Only our own lock: a lock taken over after we were presumed dead is not ours to remove.
        try {
          if (readFileSync(path, "utf8") === token) unlinkSync(path);
        } catch {
          // already gone
        }
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw new NetLabError(`cannot take the lab lock ${path}: ${coerceError(e).message}`);
    }
    const holder = holderPid(path);
    if (holder === undefined || !pidAlive(holder)) {
      // A dead run's lock (or one being written this instant: it is retried, not removed twice in a row).
      await sleep(100);
      if (holderPid(path) === holder) {
        try {
          unlinkSync(path);
        } catch {
          // another waiter removed it first
        }
      }
      continue;
    }
    if (Date.now() > deadline) throw new NetLabError(`another network lab (pid ${holder}, lock ${path}) did not close within ${timeoutMs} ms; wait for it or stop it`);
    await sleep(500);
  }
}
