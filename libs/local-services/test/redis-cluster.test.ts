/** A private 3-master + 3-replica Redis Cluster starts, names the master of a hash tag, and fails over when it dies. */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import test from "node:test";
import { startRedisCluster } from "../src/index.ts";

const run = promisify(execFile);

test("startRedisCluster: 6 nodes, cluster ok; killing the master of {farm} promotes its replica", { timeout: 180_000 }, async () => {
  const cluster = await startRedisCluster();
  try {
    assert.equal(cluster.nodes.length, 6);
    assert.match(cluster.url, /^redis\+cluster:\/\/127\.0\.0\.1:\d+,127\.0\.0\.1:\d+,127\.0\.0\.1:\d+$/);
    const master = await cluster.masterOfKey("{farm}");
    // -c follows MOVED: a write through any node lands on the slot's master.
    const seed = cluster.nodes.find((n) => n.port !== master.port)!;
    await run("redis-cli", ["-c", "-p", String(seed.port), "set", "{farm}:x", "1"]);
    master.kill();
    await cluster.waitForFailover(master.port);
    const promoted = await cluster.masterOfKey("{farm}");
    assert.notEqual(promoted.port, master.port, "a replica took over the slot");
  } finally {
    await cluster.stop();
  }
});
