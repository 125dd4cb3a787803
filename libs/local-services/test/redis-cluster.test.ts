/** A private 3-master + 3-replica Redis Cluster starts, names the master of a hash tag, and fails over when it dies. */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import test from "node:test";
import { startRedisCluster } from "../src/index.ts";

const run = promisify(execFile);

/** Runs `commands` (one per line) through one redis-cli connection to `port`; its replies, a line each. */
function cliOnOneConnection(port: number, commands: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const cli = execFile("redis-cli", ["-p", String(port)], (err, stdout) => (err ? reject(err) : resolve(stdout)));
    cli.stdin!.end(commands);
  });
}

test("startRedisCluster: 6 nodes, cluster ok, replicas in sync at once; killing the master of {farm} promotes its replica with the data", { timeout: 180_000 }, async () => {
  const cluster = await startRedisCluster();
  try {
    assert.equal(cluster.nodes.length, 6);
    assert.match(cluster.url, /^redis\+cluster:\/\/127\.0\.0\.1:\d+,127\.0\.0\.1:\d+,127\.0\.0\.1:\d+$/);
    const master = await cluster.masterOfKey("{farm}");
    // -c follows MOVED: a write through any node lands on the slot's master.
    const seed = cluster.nodes.find((n) => n.port !== master.port)!;
    await run("redis-cli", ["-c", "-p", String(seed.port), "set", "{farm}:x", "1"]);
    // Replication is asynchronous; WAIT makes sure the replica has the write before the master dies. WAIT counts
    // the writes of its own connection (a fresh one has none: it answers at once), so a write and WAIT go
    // together on one connection to the master; the replication stream is in order, so {farm}:x came before.
    const [wrote, acked] = (await cliOnOneConnection(master.port, "SET {farm}:y 2\nWAIT 1 30000\n")).trim().split("\n");
    assert.equal(wrote, "OK");
    assert.ok(Number(acked) >= 1, `a replica acknowledged the writes before the master dies (WAIT answered ${acked})`);
    master.kill();
    await cluster.waitForFailover(master.port);
    const promoted = await cluster.masterOfKey("{farm}");
    assert.notEqual(promoted.port, master.port, "a replica took over the slot");
    const { stdout } = await run("redis-cli", ["-c", "-p", String(promoted.port), "get", "{farm}:x"]);
    assert.equal(stdout.trim(), "1", "the promoted replica holds what its master had");
  } finally {
    await cluster.close();
  }
});
