/**
 * BurstFetchWorker against a real Redis behind a link with 10 ms of latency each way (a TCP relay): a burst of
 * waiting jobs is taken in a few round trips where BullMQ's own Worker spends one per job, every job still
 * runs exactly once under a lock token of its own, and jobs beyond one Worker's room still wake the next.
 */
import assert from "node:assert/strict";
import net from "node:net";
import { after, before, test } from "node:test";
import { Queue, Worker, type Job } from "bullmq";
import { startRedis, type LocalRedis } from "@farm/local-services";
import { BurstFetchWorker } from "../src/index.ts";

const ONE_WAY_MS = 10;
const JOBS = 30;

let redis: LocalRedis;
let relay: net.Server;
let relayUrl: string;
const sockets = new Set<net.Socket>();

/** Forwards both ways to Redis, each chunk `ONE_WAY_MS` late, in order. */
function slowRelay(target: { host: string; port: number }): net.Server {
  const late = (from: net.Socket, to: net.Socket) => from.on("data", (b) => setTimeout(() => to.writable && to.write(b), ONE_WAY_MS));
  return net.createServer((client) => {
    const upstream = net.connect(target);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => undefined);
      s.on("close", () => (client.destroy(), upstream.destroy(), sockets.delete(s)));
    }
    late(client, upstream);
    late(upstream, client);
  });
}

before(async () => {
  redis = await startRedis();
  const u = new URL(redis.url);
  relay = slowRelay({ host: u.hostname, port: Number(u.port) });
  await new Promise<void>((r) => relay.listen(0, "127.0.0.1", r));
  relayUrl = `redis://127.0.0.1:${(relay.address() as net.AddressInfo).port}`;
});
after(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((r) => relay?.close(r));
  await redis?.close();
});

/** Adds JOBS jobs to `name` (directly), then runs `make`'s worker over the slow link until all started. */
async function startAll(name: string, make: (process: (job: Job) => Promise<void>) => Worker): Promise<{ ms: number; ids: string[]; tokens: string[] }> {
  const queue = new Queue(name, { connection: { url: redis.url }, prefix: "{burst}" });
  await queue.addBulk(Array.from({ length: JOBS }, (_, i) => ({ name: "j", data: { i }, opts: { jobId: `${name}-${i}` } })));
  const ids: string[] = [];
  const tokens: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let allStarted!: () => void;
  const started = new Promise<void>((r) => (allStarted = r));
  const worker = make(async (job) => {
    ids.push(job.id!);
    tokens.push(job.token!);
    if (ids.length === JOBS) allStarted();
    await held;
  });
  try {
    await worker.waitUntilReady();
    const t0 = performance.now();
    void worker.run();
    await started;
    return { ms: performance.now() - t0, ids, tokens };
  } finally {
    release();
    await worker.close();
    await queue.close();
  }
}

test("a burst of waiting jobs is taken in a few round trips, each job once with a token of its own", { timeout: 60_000 }, async (t) => {
  const opts = { connection: { url: relayUrl, maxRetriesPerRequest: null }, prefix: "{burst}", concurrency: JOBS, autorun: false };
  const plain = await startAll("plain", (p) => new Worker("plain", p, opts));
  const bursts: number[] = [];
  const burst = await startAll("burst", (p) => new BurstFetchWorker("burst", p, opts, { onBurst: (n) => bursts.push(n) }));
  t.diagnostic(`${JOBS} jobs over a ${2 * ONE_WAY_MS} ms round trip: BullMQ's Worker ${plain.ms.toFixed(0)} ms, BurstFetchWorker ${burst.ms.toFixed(0)} ms (bursts: ${bursts.join(", ")})`);

  assert.equal(new Set(burst.ids).size, JOBS, "every job started once");
  assert.deepEqual([...burst.ids].sort(), Array.from({ length: JOBS }, (_, i) => `burst-${i}`).sort());
  assert.equal(new Set(burst.tokens).size, JOBS, "each job under a lock token of its own");
  const inBursts = bursts.reduce((a, n) => a + n, 0);
  assert.ok(inBursts >= JOBS / 2 && inBursts < JOBS, `jobs taken in bursts (told to onBurst): ${bursts.join(", ")}`);
  // BullMQ's Worker waits a round trip (2 × 10 ms) per job: ≥ 600 ms for 30; a burst needs a handful.
  assert.ok(plain.ms >= JOBS * 2 * ONE_WAY_MS, `plain Worker: ${plain.ms.toFixed(0)} ms`);
  assert.ok(burst.ms * 3 < plain.ms, `burst ${burst.ms.toFixed(0)} ms against plain ${plain.ms.toFixed(0)} ms`);
});

test("jobs the burst fetched complete normally: none is left active or stalled", { timeout: 60_000 }, async () => {
  const name = "complete";
  const queue = new Queue(name, { connection: { url: redis.url }, prefix: "{burst}" });
  await queue.addBulk(Array.from({ length: JOBS }, (_, i) => ({ name: "j", data: { i }, opts: { jobId: `${name}-${i}` } })));
  const stalled: string[] = [];
  const worker = new BurstFetchWorker(name, async (job) => ({ doubled: (job.data as { i: number }).i * 2 }), { connection: { url: relayUrl, maxRetriesPerRequest: null }, prefix: "{burst}", concurrency: 8 });
  worker.on("stalled", (id) => stalled.push(id));
  try {
    for (;;) {
      const counts = await queue.getJobCounts("completed", "active", "wait", "prioritized", "delayed", "failed");
      if (counts.completed === JOBS) {
        assert.deepEqual({ ...counts, completed: 0 }, { completed: 0, active: 0, wait: 0, prioritized: 0, delayed: 0, failed: 0 });
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    const results = await Promise.all(Array.from({ length: JOBS }, (_, i) => queue.getJob(`${name}-${i}`)));
    assert.deepEqual(results.map((j) => j?.returnvalue), Array.from({ length: JOBS }, (_, i) => ({ doubled: i * 2 })));
    assert.deepEqual(stalled, []);
  } finally {
    await worker.close();
    await queue.close();
  }
});

test("jobs beyond one Worker's room wake the next blocked Worker instead of waiting for its timeout", { timeout: 60_000 }, async () => {
  const name = "share";
  const queue = new Queue(name, { connection: { url: redis.url }, prefix: "{burst}" });
  const startedBy = new Map<string, number>();
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const make = (tag: string, concurrency: number) =>
    new BurstFetchWorker(name, async () => {
      startedBy.set(tag, (startedBy.get(tag) ?? 0) + 1);
      await held;
    }, { connection: { url: redis.url, maxRetriesPerRequest: null }, prefix: "{burst}", concurrency, drainDelay: 5 });
  const workers = [make("small", 2), make("large", 10)];
  const total = () => (startedBy.get("small") ?? 0) + (startedBy.get("large") ?? 0);
  try {
    // Jobs added to a paused queue set no wake-up marker; resuming sets one, which wakes one blocked Worker.
    await queue.pause();
    await Promise.all(workers.map((w) => w.waitUntilReady()));
    await new Promise((r) => setTimeout(r, 300)); // both are blocked waiting for jobs (drainDelay: 5 s)
    await queue.addBulk(Array.from({ length: 12 }, (_, i) => ({ name: "j", data: { i }, opts: { jobId: `${name}-${i}` } })));
    const t0 = performance.now();
    await queue.resume();
    while (total() < 12) {
      assert.ok(performance.now() - t0 < 3000, `after 3 s only ${JSON.stringify([...startedBy])} started`);
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.deepEqual([startedBy.get("small"), startedBy.get("large")], [2, 10], "each Worker took what it had room for");
  } finally {
    release();
    await Promise.all(workers.map((w) => w.close()));
    await queue.close();
  }
});
