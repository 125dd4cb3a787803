import { test } from "node:test";
import assert from "node:assert/strict";
import { Queue, QueueEvents, Worker } from "bullmq";
import { startRedis } from "@farm/local-services";
import {
  QUEUE_NAMES,
  JobRejectedError,
  QueueError,
  campaignKeys,
  episodeJobId,
  failureCodeOf,
  formatFailureReason,
  type QueueErrorCode,
  parseEpisodeJobId,
  parseEpisodeJobResult,
  redactRedisUrl,
  redisConnection,
  resolveEpisodeJob,
  resolveQueuePrefix,
  type EpisodeJobData,
} from "../src/index.ts";
import { parseEpisodeJob, parseRedisUrl } from "@farm/queue/testing";

const HASH = "a".repeat(64);
const goodJob: EpisodeJobData = {
  v: 1,
  campaignId: "c1",
  episodeIndex: 3,
  taskId: "classic_2048",
  taskHash: HASH,
  policy: { spec: "random" },
  seed: 45,
  options: { maxEpisodeSteps: 100 },
};

const LINK = { socketTimeout: 10_000, connectTimeout: 5000, keepAlive: 5000 };

test("REDIS_URL parsing: host, port, db, user, password, rediss", () => {
  assert.deepEqual(parseRedisUrl("redis://127.0.0.1:7000"), { host: "127.0.0.1", port: 7000, ...LINK });
  assert.deepEqual(parseRedisUrl("redis://user:p%40ss@redis.example:6380/2"), {
    host: "redis.example", port: 6380, db: 2, username: "user", password: "p@ss", ...LINK,
  });
  assert.deepEqual(parseRedisUrl("redis://:secret@h"), { host: "h", port: 6379, password: "secret", ...LINK });
  assert.deepEqual(parseRedisUrl("rediss://u:pw@secure.example"), {
    host: "secure.example", port: 6379, username: "u", password: "pw", tls: { servername: "secure.example" }, ...LINK,
  });
  assert.deepEqual(parseRedisUrl("redis://[::1]:7001"), { host: "::1", port: 7001, ...LINK });
  assert.equal(redisConnection("redis://h:1", "blocking").maxRetriesPerRequest, null);
  assert.equal(redisConnection("redis://h:1").maxRetriesPerRequest, undefined);
  assert.throws(() => parseRedisUrl("http://h"), (e: unknown) => e instanceof QueueError && e.code === "REDIS_URL_INVALID" && /scheme/.test(e.message));
  assert.throws(() => parseRedisUrl("redis://u:topsecret@h/abc"), (e: unknown) => e instanceof QueueError && !e.message.includes("topsecret") && /database/.test(e.message));
  assert.equal(redactRedisUrl("redis://u:topsecret@h:1/0"), "redis://u:***@h:1/0");
});

test("REDIS_URL link timeouts: defaults, per-URL values, a blocking connection's extra wait, bad values refused", () => {
  assert.equal(redisConnection("redis://h:1").socketTimeout, 10_000);
  // BZPOPMIN blocks up to 10 s by design: a blocking connection waits that much longer before calling the link dead.
  assert.equal(redisConnection("redis://h:1", "blocking").socketTimeout, 20_000);
  const tuned = parseRedisUrl("redis://h:1/0?socket_timeout_ms=2500&connect_timeout_ms=800");
  assert.equal(tuned.socketTimeout, 2500);
  assert.equal(tuned.connectTimeout, 800);
  assert.throws(() => parseRedisUrl("redis://u:topsecret@h?socket_timeout_ms=abc"), (e: unknown) => e instanceof QueueError && /socket_timeout_ms/.test(e.message) && !e.message.includes("topsecret"));
  assert.throws(() => parseRedisUrl("redis://h?socket_timeout_ms=5"), /at least 100/);
  assert.throws(() => parseRedisUrl("redis://h?timeout=5"), /unknown parameter 'timeout'/);
});

test("queue prefix: default hash tag, env override, bad values refused", () => {
  assert.equal(resolveQueuePrefix(undefined), "{farm}");
  assert.equal(resolveQueuePrefix("{t1}"), "{t1}");
  assert.throws(() => resolveQueuePrefix("a:b"), /invalid queue prefix/);
});

test("episode job ids are deterministic, colon-free and round-trip", () => {
  assert.equal(episodeJobId("c-abc", 7), "c-abc-7");
  assert.equal(episodeJobId("c-abc", 7), episodeJobId("c-abc", 7));
  assert.deepEqual(parseEpisodeJobId("c-abc-7"), { campaignId: "c-abc", episodeIndex: 7 });
  assert.equal(parseEpisodeJobId("nodash"), undefined);
  assert.equal(parseEpisodeJobId("c-07"), undefined);
  assert.throws(() => episodeJobId("a:b", 1), /invalid campaign id/);
  assert.throws(() => episodeJobId("ok", -1), /non-negative/);
  assert.equal(campaignKeys("{farm}", "c1").record, "{farm}:campaign:c1");
});

test("payload validation errors name the job id and the field", () => {
  assert.deepEqual(parseEpisodeJob(goodJob, "c1-3"), goodJob);
  const cases: Array<[unknown, RegExp]> = [
    [{ ...goodJob, taskHash: "zz" }, /job c1-3: .*taskHash: task hash/],
    [{ ...goodJob, seed: 1.5 }, /job c1-3: .*seed/],
    [{ ...goodJob, policy: { spec: "/bin/sh -c rm" } }, /policy\.spec/],
    [{ ...goodJob, options: { maxEpisodeSteps: 0 } }, /options\.maxEpisodeSteps/],
    [{ ...goodJob, options: { command: "reboot" } }, /options: .*command/i],
    [{ ...goodJob, setupSteps: [] }, /\(root\): .*setupSteps/i],
    [{ ...goodJob, v: 2 }, /job c1-3: .*\bv:/],
  ];
  for (const [data, re] of cases) {
    assert.throws(() => parseEpisodeJob(data, "c1-3"), (e: unknown) => {
      assert.ok(e instanceof QueueError);
      assert.equal(e.code, "JOB_PAYLOAD_INVALID");
      assert.match(e.message, re);
      return true;
    });
  }
  const result = { v: 1, outcome: "terminated", cause: "episode_end", steps: 12, reward: 1.5, worker: "w1", device: "emulator-5556" };
  assert.deepEqual(parseEpisodeJobResult(result, "c1-3"), result);
  assert.throws(() => parseEpisodeJobResult({ ...result, outcome: "won" }, "c1-3"), /job c1-3: invalid episode result: outcome/);
});

test("resolveEpisodeJob refuses unknown ids and hash mismatches as unrecoverable", () => {
  const tasks = new Map([["classic_2048", { task: { id: "classic_2048" }, hash: HASH }]]);
  assert.equal(resolveEpisodeJob(goodJob, "c1-3", tasks).task.hash, HASH);
  const expectRejected = (data: unknown, code: string) =>
    assert.throws(() => resolveEpisodeJob(data, "c1-3", tasks), (e: unknown) => {
      assert.ok(e instanceof JobRejectedError);
      assert.equal(e.name, "UnrecoverableError");
      assert.equal(failureCodeOf(e.message), code);
      return true;
    });
  expectRejected({ ...goodJob, taskId: "nope" }, "TASK_UNKNOWN");
  expectRejected({ ...goodJob, taskHash: "b".repeat(64) }, "TASK_HASH_MISMATCH");
  expectRejected({ ...goodJob, seed: -1 }, "JOB_PAYLOAD_INVALID");
  assert.equal(failureCodeOf("boom"), "error");
});

test("the worker's failure codes are QueueErrorCodes and read back from a failedReason", () => {
  const codes: QueueErrorCode[] = ["POLICY_UNKNOWN", "POLICY_INVALID", "TASK_NOT_RUNNABLE", "DEVICE_TROUBLE", "DEVICE_UNUSABLE", "POLICY_FAILED", "CANCELLED"];
  for (const code of codes) assert.equal(failureCodeOf(formatFailureReason(code, "device s1: detail")), code);
});

test("through BullMQ: a rejected job fails after one attempt with its code; a duplicate id is not added", async (t) => {
  const redis = await startRedis();
  const prefix = `{qt${process.pid}}`;
  const connection = redisConnection(redis.url);
  const queue = new Queue(QUEUE_NAMES.episodes, { connection, prefix });
  const events = new QueueEvents(QUEUE_NAMES.episodes, { connection: redisConnection(redis.url, "blocking"), prefix });
  const tasks = new Map([["classic_2048", { task: { id: "classic_2048" }, hash: HASH }]]);
  const worker = new Worker(
    QUEUE_NAMES.episodes,
    async (job) => {
      resolveEpisodeJob(job.data, job.id, tasks);
      return { ok: true };
    },
    { connection: redisConnection(redis.url, "blocking"), prefix },
  );
  t.after(async () => {
    await worker.close();
    await events.close();
    await queue.close();
    await redis.close(); // last: closing BullMQ clients needs the server
  });
  await events.waitUntilReady();
  const id = episodeJobId("c1", 3);
  const job = await queue.add("episode", { ...goodJob, taskId: "unknown_task" }, { jobId: id, attempts: 5 });
  await assert.rejects(job.waitUntilFinished(events, 10_000), /\[TASK_UNKNOWN\] job c1-3: task 'unknown_task'/);
  const failed = await queue.getJob(id);
  assert.equal(failed?.attemptsMade, 1);
  await queue.add("episode", goodJob, { jobId: id });
  const counts = await queue.getJobCounts();
  assert.equal(Object.values(counts).reduce((a, b) => a + b, 0), 1);
});
