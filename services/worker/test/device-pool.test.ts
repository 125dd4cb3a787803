/**
 * The host's device pool: idle devices take jobs, paused/leased/removed ones do not, retries prefer
 * another device, capacity follows, waiting jobs get the next idle device, close rejects waiters.
 */
import assert from "node:assert/strict";
import test from "node:test";
import { DevicePool, PoolClosedError } from "../src/device-pool.ts";

const dev = (serial: string) => ({ serial });

function poolWith(...serials: string[]) {
  const capacities: number[] = [];
  const pool = new DevicePool<{ serial: string }>({ onCapacity: (n) => capacities.push(n) });
  const members = serials.map(dev);
  for (const m of members) pool.add(m);
  return { pool, members, capacities };
}

test("each job gets a different idle device; a job waits when all are busy and gets the first one freed", async () => {
  const { pool } = poolWith("a", "b");
  const x = await pool.acquire("j1");
  const y = await pool.acquire("j2");
  assert.notEqual(x.serial, y.serial);
  let got: string | undefined;
  const waiting = pool.acquire("j3").then((m) => (got = m.serial));
  await new Promise((r) => setImmediate(r));
  assert.equal(got, undefined, "no idle device: the job waits");
  pool.release(y);
  await waiting;
  assert.equal(got, y.serial);
});

test("a retry prefers another device than the one it failed on, but takes that one when it is the only idle one", async () => {
  const { pool } = poolWith("a", "b", "c");
  for (const failed of ["a", "b", "c"]) {
    pool.noteFailure("job-7", failed);
    const m = await pool.acquire("job-7");
    assert.notEqual(m.serial, failed);
    pool.release(m);
  }
  const solo = poolWith("a").pool;
  solo.noteFailure("job-8", "a");
  assert.equal((await solo.acquire("job-8")).serial, "a");
});

test("a paused device takes no job until resumed; pausing a busy device takes effect when its job ends", async () => {
  const { pool, capacities } = poolWith("a", "b");
  pool.pause("a");
  assert.equal(pool.capacity, 1);
  const m = await pool.acquire("j1");
  assert.equal(m.serial, "b");
  pool.pause("b"); // busy: finishes its job, then pauses
  assert.equal(pool.capacity, 0);
  pool.release(m);
  assert.deepEqual(pool.states(), { a: "paused", b: "paused" });
  pool.resume("a");
  assert.equal((await pool.acquire("j2")).serial, "a");
  assert.deepEqual(capacities, [1, 2, 1, 0, 1]);
});

test("remove: the device takes no new job and the returned promise waits for its running job", async () => {
  const { pool } = poolWith("a", "b");
  const m = await pool.acquire("j1");
  let removed = false;
  const p = pool.remove(m.serial).then(() => (removed = true));
  await new Promise((r) => setImmediate(r));
  assert.equal(removed, false);
  assert.equal(pool.has(m.serial), false);
  pool.release(m);
  await p;
  assert.equal(removed, true);
  assert.notEqual((await pool.acquire("j2")).serial, m.serial);
});

test("lease: an idle device leaves the campaign pool until release(); none idle → undefined", async () => {
  const { pool } = poolWith("a", "b");
  const lease = pool.lease();
  assert.ok(lease);
  assert.equal(pool.capacity, 1);
  const m = await pool.acquire("j1");
  assert.notEqual(m.serial, lease.serial, "a leased device takes no job");
  assert.equal(pool.lease(), undefined, "the other device is busy: nothing to lease");
  let got: string | undefined;
  const waiting = pool.acquire("j2").then((x) => (got = x.serial));
  await new Promise((r) => setImmediate(r));
  assert.equal(got, undefined);
  lease.release();
  lease.release(); // idempotent
  await waiting;
  assert.equal(got, lease.serial, "released: the device takes jobs again");
  pool.release(m);
  assert.equal(pool.capacity, 2);
});

test("a lease of a device removed meanwhile releases nothing; close rejects waiting and new acquires", async () => {
  const { pool } = poolWith("a");
  const lease = pool.lease()!;
  await pool.remove("a");
  lease.release();
  assert.equal(pool.has("a"), false);
  const waiting = pool.acquire("j1");
  pool.close();
  await assert.rejects(waiting, PoolClosedError);
  await assert.rejects(pool.acquire("j2"), PoolClosedError);
});

test("an aborted wait rejects and leaves the queue of waiting jobs", async () => {
  const { pool } = poolWith("a");
  const m = await pool.acquire("j1");
  const ac = new AbortController();
  const waiting = pool.acquire("j2", ac.signal);
  ac.abort(new Error("cancelled"));
  await assert.rejects(waiting, /cancelled/);
  pool.release(m);
  assert.deepEqual(pool.states(), { a: "idle" }, "the aborted waiter did not take the device");
});
