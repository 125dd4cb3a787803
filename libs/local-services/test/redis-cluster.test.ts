/** A private 3-master + 3-replica Redis Cluster starts, names the master of a hash tag, and fails over when it dies. */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import test from "node:test";
import { startRedisCluster } from "../src/index.ts";

const run = promisify(execFile);

test("startRedisCluster: 6 nodes, cluster ok, replicas in sync at once; killing the master of {farm} promotes its replica with the data", { timeout: 180_000 }, async () => {
  const cluster = await startRedisCluster();
  try {
    assert.equal(cluster.nodes.length, 6);
    assert.match(cluster.url, /^redis\+cluster:\/\/127\.0\.0\.1:\d+,127\.0\.0\.1:\d+,127\.0\.0\.1:\d+$/);
    const master = await cluster.masterOfKey("{farm}");
    // -c follows MOVED: a write through any node lands on the slot's master.
    const seed = cluster.nodes.find((n) => n.port !== master.port)!;
    await run("redis-cli", ["-c", "-p", String(seed.port), "set", "{farm}:x", "1"]);
    // Replication is asynchronous; WAIT makes sure the replica has the write before the master dies.
    await run("redis-cli", ["-p", String(master.port), "wait", "1", "2000"]);
    master.kill();
    await cluster.waitForFailover(master.port);
    const promoted = await cluster.masterOfKey("{farm}");
    assert.notEqual(promoted.port, master.port, "a replica took over the slot");
    const { stdout } = await run("redis-cli", ["-c", "-p", String(promoted.port), "get", "{farm}:x"]);
    assert.equal(stdout.trim(), "1", "the promoted replica holds what its master had");
  } finally {
    await cluster.stop();
  }
});
