/**
 * The network lab's lock (lab-lock.ts): one lab at a time on a machine. Runs without root (a private lock file).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { sleep } from "@farm/time";
import { acquireLabLock } from "../src/net-lab/lab-lock.ts";

test("one lab at a time: a second lab waits for the first to close; a dead run's lock is taken over; a live one times out with its pid", { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "farm-lab-lock-"));
  try {
    const lock = path.join(dir, "lab.lock");
    const release = await acquireLabLock("a", 10_000, lock);
    const got: { second?: () => void } = {};
    const waiting = acquireLabLock("b", 30_000, lock).then((r) => (got.second = r));
    await sleep(1500);
    assert.equal(got.second, undefined, "the second lab waits while the first holds the lock");
    release();
    const second = await waiting;
    await assert.rejects(acquireLabLock("c", 1000, lock), new RegExp(`pid ${process.pid}`));
    second();
    // A pid that cannot be alive (above Linux's pid_max) stands for a run that died holding the lock.
    writeFileSync(lock, "4194305 dead");
    const third = await acquireLabLock("d", 10_000, lock);
    third();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
