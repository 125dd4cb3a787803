/**
 * Hostile jobs in Redis: payloads that are not JSON, absurdly large, or JSON with hostile field values
 * (huge numbers, NaN/Infinity as text, control/bidi characters, path separators in ids, prototype
 * names), checked in-process with fast-check and end to end through a real Redis and an
 * EpisodeJobWorker: every one fails at once with JOB_PAYLOAD_INVALID naming the job id — none is
 * accepted, none sits in `active`, none crashes the worker. Also: credentials never printed.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Queue, QueueEvents, Worker } from "bullmq";
import fc from "fast-check";
import { startRedis, type LocalRedis } from "@farm/local-services";
import {
  EpisodeJobWorker,
  EpisodeQueue,
  JobRejectedError,
  QUEUE_NAMES,
  QueueError,
  UnparseablePayload,
  failureCodeOf,
  createRedisClient,
  redactCredentials,
  redactRedisUrl,
  redisConnection,
  resolveEpisodeJob,
  type EpisodeJobData,
} from "../src/index.ts";
import { parseEpisodeJob } from "@farm/queue/testing";

const HASH = "a".repeat(64);
const good: EpisodeJobData = { v: 1, campaignId: "c1", episodeIndex: 3, taskId: "classic_2048", taskHash: HASH, policy: { spec: "random" }, seed: 45, options: {} };
const tasks = new Map([["classic_2048", { task: { id: "classic_2048" }, hash: HASH }]]);
const counts: Record<string, number> = {};
const count = (k: string, n = 1) => (counts[k] = (counts[k] ?? 0) + n);

let redis: LocalRedis;
before(async () => {
  redis = await startRedis();
});
after(async () => {
  await redis?.close();
  console.log(`hostile job cases: ${JSON.stringify(counts)}`);
});

/** Hostile values for any field. */
const hostileValue = fc.oneof(
  fc.constantFrom(1e308, -1e308, 2 ** 53, 2 ** 64, -1, 0.5, 1e18, "NaN", "Infinity", "-0", null, true, [], {}, "", "../../etc/passwd", "a/b", "a\\b", "\u0000", "\u001b[2J", "\u202eevil", "__proto__", "constructor", "toString", "x".repeat(10_000)),
  fc.string({ maxLength: 40 }),
  fc.double(),
  fc.integer(),
  fc.jsonValue({ maxDepth: 3 }),
);
const fields = ["v", "campaignId", "episodeIndex", "taskId", "taskHash", "policy", "seed", "options", "__proto__", "constructor", "extra"] as const;
const optionFields = ["maxEpisodeSteps", "maxEpisodeSec", "frameEvery", "stepTimeoutMs", "__proto__", "toString"] as const;
const policySpecs = fc.constantFrom(
  "http://169.254.169.254/latest/meta-data",
  "http:http://user:secret@127.0.0.1/act",
  "http:https://u:p%40ss@host/act",
  "scripted:../../etc/passwd",
  "module:/etc/passwd",
  "scripted:a/b",
  "module:\u0000x",
  "random:1",
  "http:javascript:alert(1)",
  "http:http://x y",
  "http:" + "http://a/" + "b".repeat(3000),
);

/** A valid job with one field replaced by a hostile value (or a hostile policy / options). */
const hostileJob = fc.oneof(
  fc.record({ field: fc.constantFrom(...fields), value: hostileValue }).map(({ field, value }) => JSON.parse(JSON.stringify({ ...good, [field]: value })) as unknown),
  fc.record({ field: fc.constantFrom(...optionFields), value: hostileValue }).map(({ field, value }) => JSON.parse(JSON.stringify({ ...good, options: { [field]: value } })) as unknown),
  policySpecs.map((spec) => ({ ...good, policy: { spec } })),
  fc.jsonValue({ maxDepth: 4 }),
);

function isValidAsIs(data: unknown): boolean {
  try {
    parseEpisodeJob(data, "x");
    return true;
  } catch {
    return false;
  }
}

test("fast-check: 400 hostile payloads are refused with JOB_PAYLOAD_INVALID naming the job id, or are valid jobs", () => {
  fc.assert(
    fc.property(hostileJob, fc.constantFrom("c1-3", "evil\u001b[2J-1", "x".repeat(500), "__proto__"), (data, jobId) => {
      const t0 = performance.now();
      try {
        const r = resolveEpisodeJob(data, jobId, tasks);
        // Accepted only if it is an ordinary valid job of a known task.
        assert.equal(r.task, tasks.get("classic_2048"));
        assert.ok(Number.isSafeInteger(r.data.seed) && Number.isSafeInteger(r.data.episodeIndex));
        assert.match(r.data.policy.spec, /^(random|scripted:[A-Za-z0-9_.-]+|module:[A-Za-z0-9_.-]+|http:https?:\/\/[^@\s]+)$/);
        count("accepted (valid)");
      } catch (e) {
        assert.ok(e instanceof JobRejectedError, `not a JobRejectedError: ${String(e)}`);
        assert.ok(["JOB_PAYLOAD_INVALID", "TASK_UNKNOWN", "TASK_HASH_MISMATCH"].includes(e.code), e.code);
        assert.match(e.message, /^\[[A-Z_]+\] job /);
        assert.doesNotMatch(e.message, /[\u0000-\u001f\u007f-\u009f\u202a-\u202e]/, "message is printable");
        assert.ok(e.message.length < 2000, `message of ${e.message.length} characters`);
        assert.doesNotMatch(e.message, /secret|p%40ss/, "no credentials");
        count("refused");
      }
      assert.ok(performance.now() - t0 < 1000);
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
    }),
    { numRuns: 400, seed: 3 },
  );
});

test("an unparseable payload becomes UnparseablePayload and is refused with its job id", () => {
  for (const raw of ["{not json", "x".repeat(100_000)]) {
    const data = new UnparseablePayload("payload is not JSON", raw.slice(0, 20));
    assert.throws(() => parseEpisodeJob(data, "c9-1"), (e: unknown) => e instanceof QueueError && e.code === "JOB_PAYLOAD_INVALID" && /^job c9-1: payload is not JSON/.test(e.message));
    count("unparseable (unit)");
  }
});

test("through real Redis: non-JSON, oversized and hostile jobs fail at once with JOB_PAYLOAD_INVALID; none stays active", { timeout: 120_000 }, async () => {
  const prefix = `{hj${process.pid}}`;
  const queue = new Queue(QUEUE_NAMES.episodes, { connection: redisConnection(redis.url), prefix });
  const events = new QueueEvents(QUEUE_NAMES.episodes, { connection: redisConnection(redis.url, "blocking"), prefix });
  await events.waitUntilReady();
  const client = createRedisClient(redis.url);
  const failed = new Map<string, string>();
  events.on("failed", ({ jobId, failedReason }) => failed.set(jobId, failedReason));
  const raws: Record<string, string> = {
    "not-json-1": "{not json",
    "not-json-2": "",
    "not-json-3": "undefined",
    "not-json-4": "\u0000\u0001\u001b[2J",
    "not-json-5": '{"v":1,',
    "huge-1": JSON.stringify({ ...good, pad: "x".repeat(200_000) }),
    "nan-1": '{"v":1,"campaignId":"c1","episodeIndex":NaN}',
  };
  const hostile: Record<string, unknown> = {
    "proto-1": JSON.parse('{"__proto__":{"polluted":1},"v":1}'),
    "ctor-1": { ...good, taskId: "constructor" },
    "sep-1": { ...good, campaignId: "../../x" },
    "big-1": { ...good, seed: 1e300 },
    "ctrl-1": { ...good, taskId: "a\u202eb" },
    "meta-1": { ...good, policy: { spec: "http:http://user:secret@169.254.169.254/" } },
    "array-1": [good],
  };
  for (const [id, data] of Object.entries(hostile)) await queue.add("episode", data, { jobId: id, attempts: 3 });
  for (const [id, raw] of Object.entries(raws)) {
    await queue.add("episode", {}, { jobId: id, attempts: 3 });
    // What a buggy or hostile producer could leave: the stored text itself is not a job.
    await client.hset(`${prefix}:${QUEUE_NAMES.episodes}:${id}`, "data", raw);
  }
  const ids = [...Object.keys(hostile), ...Object.keys(raws)];
  const worker = new EpisodeJobWorker(QUEUE_NAMES.episodes, async (job) => resolveEpisodeJob(job.data, job.id, tasks), {
    connection: redisConnection(redis.url, "blocking"),
    prefix,
    concurrency: 4,
    drainDelay: 1,
  });
  let workerErrors = 0;
  worker.on("error", () => workerErrors++);
  try {
    const deadline = Date.now() + 60_000;
    while (ids.some((id) => !failed.has(id)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    for (const id of ids) {
      const reason = failed.get(id);
      assert.ok(reason, `job ${id} did not fail (state ${await queue.getJobState(id)})`);
      assert.equal(failureCodeOf(reason), id === "ctor-1" ? "TASK_UNKNOWN" : "JOB_PAYLOAD_INVALID", `${id}: ${reason}`);
      assert.ok(reason.includes(`job ${id}`), `${id}: reason must name the job: ${reason}`);
      assert.doesNotMatch(reason, /secret/);
      assert.equal(await queue.getJobState(id), "failed");
      count("through Redis");
    }
    assert.equal((await queue.getJobCounts("active")).active, 0);
    assert.equal(workerErrors, 0, "the worker loop never saw an error");
    // Readers (scheduler, queue UI) can list such jobs through EpisodeQueue.
    const reader = new EpisodeQueue(QUEUE_NAMES.episodes, { connection: redisConnection(redis.url), prefix });
    const listed = await reader.getJobs(["failed"]);
    assert.equal(listed.length, ids.length);
    assert.ok(listed.some((j) => j.data instanceof UnparseablePayload));
    await reader.close();
  } finally {
    await worker.close();
    await events.close();
    await queue.obliterate({ force: true });
    await queue.close();
    client.disconnect();
  }
});

test("a plain BullMQ Worker leaves a non-JSON job stuck (why EpisodeJobWorker exists)", { timeout: 60_000 }, async () => {
  const prefix = `{hjplain${process.pid}}`;
  const queue = new Queue(QUEUE_NAMES.episodes, { connection: redisConnection(redis.url), prefix });
  const client = createRedisClient(redis.url);
  await queue.add("episode", {}, { jobId: "stuck-1" });
  await client.hset(`${prefix}:${QUEUE_NAMES.episodes}:stuck-1`, "data", "{not json");
  const worker = new Worker(QUEUE_NAMES.episodes, async () => undefined, { connection: redisConnection(redis.url, "blocking"), prefix, drainDelay: 1 });
  worker.on("error", () => undefined);
  try {
    const deadline = Date.now() + 5000;
    while ((await queue.getJobState("stuck-1")) !== "active" && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(await queue.getJobState("stuck-1"), "active");
  } finally {
    await worker.close(true);
    await queue.obliterate({ force: true });
    await queue.close();
    client.disconnect();
  }
});

test("credentials are never printed: Redis URLs with @ or %40 in the password, tokens in text", () => {
  const cases: [string, string][] = [
    ["redis://user:p@ss@redis.example:6380/2", "redis://user:***@redis.example:6380/2"],
    ["redis://user:p%40ss@redis.example", "redis://user:***@redis.example"],
    ["redis://:pa/ss@host:1", "redis://:***@host:1"],
    ["rediss://u:a@b@c@host", "rediss://u:***@host"],
    ["redis://token@host", "redis://***@host"],
    ["redis://127.0.0.1:6379", "redis://127.0.0.1:6379"],
  ];
  for (const [url, want] of cases) {
    assert.equal(redactRedisUrl(url), want);
    assert.equal(redactCredentials(`cannot connect to ${url} now`), `cannot connect to ${want} now`);
    count("redaction");
  }
  assert.equal(redactCredentials("Authorization: Bearer abc.def-ghi"), "Authorization: Bearer ***");
  assert.equal(redactCredentials("policy http://h/act?token=s3cr3t&x=1"), "policy http://h/act?token=***&x=1");
  count("redaction", 2);
  fc.assert(
    fc.property(fc.stringMatching(/^[A-Za-z0-9@%:/!$&'()*+,;=._~-]{1,40}$/), (password) => {
      const url = `redis://user:${password}@h.example:6379/0`;
      const shown = redactCredentials(`connecting to ${url}`);
      // Nothing of the password may survive except what also appears in the rest of the line.
      assert.equal(shown, "connecting to redis://user:***@h.example:6379/0");
      count("redaction (fast-check)");
    }),
    { numRuns: 100, seed: 5 },
  );
});
