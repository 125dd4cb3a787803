/**
 * The network lab with a Redis Cluster (issue 30): every node in a namespace of its own, reached by lab
 * addresses; the master serving the farm's keys is cut off silently while a campaign runs, a replica of it
 * takes over, the campaign ends exactly once across the hosts' folders, and the old master rejoins as a
 * replica after the heal. Needs root and iproute2; skipped with the reason elsewhere.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { NetLab, labUnavailableReason, listNamespaces } from "../src/net-lab/index.ts";
import { LabCluster } from "../src/net-lab/lab-cluster.ts";
import { LabFarm } from "../src/net-lab/lab-farm.ts";
import { runMasterPartition } from "../src/net-lab/cluster-partition-run.ts";
import { acquireLabLock } from "../src/net-lab/lab-lock.ts";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { sleep } from "@farm/time";

const skip = await labUnavailableReason();

test("a cluster master cut off from the rest: its replica takes over, the campaign ends exactly once, the old master rejoins as a replica", { skip, timeout: 300_000 }, async () => {
  const lab = await NetLab.create({ hosts: 2 });
  let runId = "";
  try {
    runId = lab.runId;
    const cluster = await LabCluster.start(lab, { nodeTimeoutMs: 2000 });
    try {
      const farm = await LabFarm.start(lab, { devicesPerHost: 3, rttMs: 0, stepMs: 50, jitterPct: 50, hostLogLevel: "info", redisUrl: cluster.url });
      try {
        const r = await runMasterPartition(farm, cluster, { campaignId: "master-cut", episodes: 200, maxSteps: 10, cutAfterMs: 2000, cutMs: 15_000, timeoutMs: 240_000 });
        assert.equal(r.state, "completed");
        assert.deepEqual({ duplicates: r.duplicates, missing: r.missing }, { duplicates: 0, missing: 0 }, "exactly once across both hosts' folders");
        assert.notEqual(r.newMaster, r.oldMaster);
        assert.equal(r.newMasterRole, "master", "the promoted replica says role:master");
        // cluster-node-timeout 2 s: not before it passed, and in seconds, not minutes (generous for a busy machine).
        assert.ok(r.failoverS > 1 && r.failoverS < 60, `failover took ${r.failoverS} s`);
        // The hosts follow the promoted replica while the old master is still silent, not only after the heal.
        assert.ok(r.finishedBeforeHeal > 0, `no episode finished between the failover and the heal (longest stall ${r.stallS} s)`);
      } finally {
        await farm.close();
      }
    } finally {
      await cluster.close();
    }
  } finally {
    await lab.close();
  }
  assert.deepEqual((await listNamespaces()).filter((n) => n.startsWith(runId)), [], "the lab and its cluster removed their namespaces");
});

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
