/**
 * The short chaos scenario (`farm bench chaos` with few episodes and short locks): two simulated hosts on
 * one Redis with AOF; worker SIGKILL, SIGSTOP past the lock, crash right after a commit and between
 * publish and claim, adb server restart, Redis SIGKILL + restart, scheduler SIGKILL, simulator SIGKILL.
 * Exactly N distinct episodes across both folders, none duplicated or missing, every file readable by
 * avrocat and Python's avro, nothing the claims do not name left visible.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { runChaos } from "../src/chaos.ts";

test("chaos (short): exactly N episodes across two hosts' folders under worker, adb, Redis, scheduler and simulator faults", { timeout: 240_000 }, async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "farm-chaos-test-"));
  let keep = true;
  try {
    const r = await runChaos({ episodes: 16, devicesPerHost: 2, maxSteps: 30, lockMs: 3000, stalledMs: 1000, window: 6, dir, timeoutMs: 200_000, log: (l) => t.diagnostic(l) });
    t.diagnostic(`episodes=${r.episodes} distinct=${r.distinct} duplicates=${r.duplicates} missing=${r.missing} quarantined=${r.quarantined} faults=${r.faults} (${r.wallSec.toFixed(0)} s)`);
    assert.equal(r.campaignState, "completed");
    assert.equal(r.distinct, 16);
    assert.equal(r.duplicates, 0);
    assert.equal(r.missing, 0);
    assert.equal(r.files, 16);
    assert.deepEqual(r.unreadableByAvrocat, []);
    assert.deepEqual(r.unreadableByPython, []);
    assert.equal(r.reconcile.claims, 16);
    assert.deepEqual(r.reconcile.extra, []);
    assert.ok(r.faults >= 7, `faults injected: ${r.faultLog.join("; ")}`);
    keep = false;
  } finally {
    if (keep) t.diagnostic(`logs and folders kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
});
