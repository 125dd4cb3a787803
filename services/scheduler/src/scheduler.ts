/**
 * The scheduler: campaigns in, episode jobs out.
 *
 * - `submit` validates the campaign against the scheduler's task folder (id + hash), stores it in Redis
 *   and enqueues the first window of episode jobs.
 * - Top-up keeps at most `windowSize` episodes of a campaign in flight (waiting + delayed + running), so a
 *   1 M-episode campaign never puts 1 M jobs in Redis: when episodes finish (QueueEvents) — and on a
 *   periodic safety tick — the next indexes are claimed atomically and enqueued in index order.
 * - Counting: an episode is counted once, from its job's result (completed) or failedReason (failed
 *   for good), via an idempotent Lua script keyed by its index. Events are the fast path; a periodic
 *   reconcile reads the state of every in-flight job, so events missed while no scheduler ran are
 *   counted later (as long as BullMQ still keeps the finished job: see defaultEpisodeJobOptions).
 * - Several scheduler processes may share a Redis: index claims are atomic, job ids are deterministic
 *   (`<campaign>-<index>`: adding an existing id is a no-op), counting is idempotent, finishing happens
 *   once. Nothing is double-enqueued or double-counted.
 *
 * Without `start()` a Scheduler is just an API over the Redis state (what the CLI uses, with
 * `enqueueOnSubmit: false`): submit, status, list, cancel. Some process must run `start()` for top-up,
 * counting and finishing.
 */
import { Queue, QueueEvents, type JobsOptions } from "bullmq";
import { llmSpecKeyProblem } from "@farm/policy/settings";
import {
  EpisodeQueue,
  QUEUE_NAMES,
  QueueError,
  RedisHealth,
  bullPriority,
  checkRedisAccess,
  CAMPAIGN_ID_PATTERN,
  DEFAULT_REDIS_URL,
  createRedisClient,
  defaultEpisodeJobOptions,
  episodeJobId,
  failureCodeOf,
  parseEpisodeJobId,
  parseEpisodeJobResult,
  goalForEpisode,
  redactRedisUrl,
  bullConnection,
  type RedisClient as Redis,
  type BullConnection,
  resolveQueuePrefix,
  type EpisodeJobData,
  readDeviceBeats,
  type DeviceBeat,
  raisePolicyVersion,
  raiseVersionInputSchema,
  readPolicyVersions,
  episodeStreamKey,
  streamGroups,
  EpisodeStreamConsumer,
  STREAM_NAME_PATTERN,
  type EpisodeStreamMessage,
} from "@farm/queue";
import { terminalSafe } from "@farm/terminal-text";

/** `GET|POST /campaigns/:id/policy-version`: the campaign's current policy version (issue 38). */
export interface CampaignPolicyVersion {
  campaignId: string;
  /** The current version; absent when none was raised. */
  version?: string;
  /** The version before this raise (POST), when there was one. */
  previous?: string;
  /** POST: whether this call changed the current version (false: it was the current one already). */
  raised?: boolean;
  /** Versions the campaign has raised (the newest 1000 are kept). */
  versions: number;
}
import { silentLogger, type Logger } from "@farm/log";
import type { FarmMetrics } from "@farm/metrics";
import { deriveCampaignId, campaignIdentity, episodeSeed, goalsRefusal, groupOf, parseCampaignInput, type CampaignSpec } from "./campaign-spec.ts";
import { CampaignStore, type CampaignRecord, type EpisodeTally, type GroupEvent } from "./campaign-store.ts";
import { statusOf, summarize, type CampaignStatus } from "./campaign-status.ts";
import { SchedulerError } from "./errors.ts";
import { folderTaskCatalog, type TaskCatalog } from "./task-catalog.ts";
import { coerceError } from "@farm/errors";
import { withDeadline } from "@farm/time";
import { gameConfigRefusal, startSnapshotRefusal } from "@farm/task";

export const DEFAULT_WINDOW_SIZE = 1000;
/**
 * Jobs per addBulk call. A job's start is measured from its creation, which BullMQ stamps before the whole
 * batch is written: big batches make the first jobs of a campaign wait for the last ones to be written, and
 * workers cannot start on any of them meanwhile (1,000 jobs at once, BullMQ alone: p99 287 ms in one batch,
 * 181 ms in batches of 100; Redis CPU per add 22 → 27 µs).
 */
export const ENQUEUE_BATCH = 100;
const REMOVABLE_STATES = new Set(["waiting", "prioritized", "delayed", "waiting-children"]);

/** Claims of a finished campaign are kept this long (re-submissions complete from them; reconcile reads them). */
const CLAIMS_TTL_SEC = 30 * 24 * 3600;

/**
 * How long an API call waits for a Redis that stopped answering (its connection still open) before
 * answering REDIS_UNAVAILABLE (HTTP 503); a closed connection answers at once. Writes may enqueue a
 * whole window of jobs, so they get longer.
 */
const API_READ_TIMEOUT_MS = 3000;
const API_WRITE_TIMEOUT_MS = 10_000;

export interface SchedulerOptions {
  /** Default: REDIS_URL, else redis://127.0.0.1:6379. */
  redisUrl?: string;
  /** How long `create` waits for Redis before failing with REDIS_UNAVAILABLE. Default 5000 ms. */
  connectTimeoutMs?: number;
  /** BullMQ prefix, default FARM_QUEUE_PREFIX or `{farm}`. */
  prefix?: string;
  /** The tasks campaigns may name: a catalog, or task files/folders (default `["tasks"]`). */
  tasks?: TaskCatalog;
  taskPaths?: string[];
  /** Most episodes of one campaign in flight at once. Default 1000; ≥ the number of devices to keep all busy. */
  windowSize?: number;
  /** Safety tick (top-up, cancel clean-up, finishing) period. Default 2000 ms. */
  tickMs?: number;
  /** Reconcile (read in-flight job states) period. Default 15000 ms. */
  reconcileMs?: number;
  /**
   * Enqueue the first window in `submit` (default true). The CLI's direct-Redis mode sets false: it only
   * stores the campaign, and the running scheduler service picks it up on its next tick — so enqueueing,
   * and the metrics that count it, happen in the service.
   */
  enqueueOnSubmit?: boolean;
  /**
   * The workers' FARM_LLM_KEY_HOSTS: when given, an `llm:` campaign whose endpoint would not get the workers' API key
   * (not listed, or plain http to a host that is not loopback) fails at submit instead of at every worker.
   */
  llmKeyHosts?: readonly string[];
  log?: Logger;
  metrics?: FarmMetrics;
}

export interface SubmitResult {
  /** False when the campaign already existed (re-submission): nothing was added. */
  created: boolean;
  campaign: CampaignStatus;
}

function checkStreamName(what: string, name: string): void {
  if (typeof name !== "string" || !STREAM_NAME_PATTERN.test(name)) throw new SchedulerError("SPEC_INVALID", `${what}: 1-64 letters, digits, '_', '.', ':', '-', starting with a letter or digit`);
}

/** A malformed id cannot name a campaign: answer "not found" instead of failing on the key. */
function assertKnownIdShape(id: string): void {
  if (!CAMPAIGN_ID_PATTERN.test(id)) throw new SchedulerError("CAMPAIGN_NOT_FOUND", `no campaign '${id}' (campaign ids are 1-64 letters, digits, '_', '.', '-')`);
}

export class Scheduler {
  private readonly specs = new Map<string, CampaignSpec>();
  private readonly topUps = new Map<string, { again: boolean; done: Promise<void> }>();
  private events?: QueueEvents;
  /** Cluster clients made for BullMQ objects (none for one Redis), quit on close. */
  private readonly ownedConnections: BullConnection[] = [];
  private timers: NodeJS.Timeout[] = [];
  private closing?: Promise<void>;

  private constructor(
    private readonly redis: Redis,
    readonly queue: Queue,
    private readonly store: CampaignStore,
    private readonly catalog: TaskCatalog,
    private readonly cfg: { redisUrl: string | undefined; prefix: string; windowSize: number; tickMs: number; reconcileMs: number; enqueueOnSubmit: boolean; llmKeyHosts: readonly string[] | undefined },
    private readonly log: Logger,
    private readonly metrics: FarmMetrics | undefined,
    private readonly health: RedisHealth,
  ) {}

  static async create(opts: SchedulerOptions = {}): Promise<Scheduler> {
    const prefix = resolveQueuePrefix(opts.prefix);
    const log = (opts.log ?? silentLogger).child({ component: "scheduler" });
    const windowSize = opts.windowSize ?? DEFAULT_WINDOW_SIZE;
    if (!Number.isSafeInteger(windowSize) || windowSize < 1) throw new SchedulerError("SPEC_INVALID", `windowSize must be a positive integer, got ${windowSize}`);
    const catalog = opts.tasks ?? folderTaskCatalog(opts.taskPaths ?? ["tasks"], log);
    const redisUrl = opts.redisUrl ?? DEFAULT_REDIS_URL;
    const redis = createRedisClient(redisUrl);
    // Bad credentials or ACLs fail now with a clear message; an unreachable Redis after connectTimeoutMs.
    try {
      await checkRedisAccess(redis, redisUrl, prefix, opts.connectTimeoutMs ?? 5000);
    } catch (e) {
      redis.disconnect();
      const qe = e as QueueError;
      throw new SchedulerError(qe.code === "REDIS_ACCESS_DENIED" ? "REDIS_ACCESS_DENIED" : "REDIS_UNAVAILABLE", qe.message);
    }
    // One Redis: options; a Cluster (redis+cluster://): a Cluster client, quit when the scheduler closes.
    const queueConn = bullConnection(redisUrl);
    const queue = new EpisodeQueue(QUEUE_NAMES.episodes, { connection: queueConn.connection, prefix });
    // One line when Redis goes away and one when it is back, however many clients retry meanwhile.
    const health = new RedisHealth(log, { onChange: (up) => opts.metrics?.setRedisUp(up) }).watch(redis);
    queue.on("error", (e) => health.noteError(e));
    try {
      await withDeadline(queue.waitUntilReady(), opts.connectTimeoutMs ?? 5000, () => new Error("timed out"));
    } catch (e) {
      redis.disconnect();
      void queue.close().catch(() => undefined).then(() => queueConn.close());
      throw new SchedulerError("REDIS_UNAVAILABLE", `cannot reach Redis at ${redactRedisUrl(redisUrl)}: ${coerceError(e).message} (set REDIS_URL or --redis)`);
    }
    const cfg = { redisUrl: opts.redisUrl, prefix, windowSize, tickMs: opts.tickMs ?? 2000, reconcileMs: opts.reconcileMs ?? 15_000, enqueueOnSubmit: opts.enqueueOnSubmit ?? true, llmKeyHosts: opts.llmKeyHosts };
    const s = new Scheduler(redis, queue, new CampaignStore(redis, prefix), catalog, cfg, log, opts.metrics, health);
    s.ownedConnections.push(queueConn);
    opts.metrics?.setQueueDepthSource(async () =>
      Object.entries(await queue.getJobCounts()).map(([state, count]) => ({ queue: queue.name, state, count })),
    );
    return s;
  }

  get prefix(): string {
    return this.cfg.prefix;
  }

  /** The scheduler's Redis connection and a new one for pub/sub (the operator relay, operator-routes.ts). */
  get operatorRedis(): { command: Redis; subscriber(): Redis } {
    return { command: this.redis, subscriber: () => createRedisClient(this.cfg.redisUrl ?? DEFAULT_REDIS_URL, "blocking") };
  }

  /** False while this process cannot reach Redis. */
  get redisUp(): boolean {
    return this.health.up;
  }

  /**
   * Runs an API call against Redis, answering REDIS_UNAVAILABLE (HTTP 503) at once while Redis is known
   * to be down and after `timeoutMs` when it stops answering (ioredis would queue the commands
   * and retry for a minute or more).
   */
  private async answering<T>(what: string, fn: () => Promise<T>, timeoutMs = API_READ_TIMEOUT_MS): Promise<T> {
    const unavailable = () =>
      new SchedulerError("REDIS_UNAVAILABLE", `cannot ${what}: Redis is unreachable${this.health.up ? "" : ` (for ${(this.health.outageMs / 1000).toFixed(0)} s: ${this.health.lastErrorMessage || "connection lost"})`}; the scheduler reconnects by itself, try again shortly`);
    if (!this.health.up) throw unavailable();
    try {
      return await withDeadline(fn(), timeoutMs, unavailable);
    } catch (e) {
      if (e instanceof SchedulerError) throw e;
      if (/ECONNREFUSED|Connection is closed|MaxRetriesPerRequest|Stream isn't writeable/.test(coerceError(e).message)) throw unavailable();
      throw e;
    }
  }

  /** Starts counting (QueueEvents), top-up and the periodic tick/reconcile. */
  async start(): Promise<void> {
    if (this.events) return;
    const eventsConn = bullConnection(this.cfg.redisUrl ?? DEFAULT_REDIS_URL, "blocking");
    this.ownedConnections.push(eventsConn);
    const events = new QueueEvents(QUEUE_NAMES.episodes, { connection: eventsConn.connection, prefix: this.cfg.prefix });
    this.events = events;
    events.on("completed", ({ jobId, returnvalue }) => void this.onJobFinished(jobId, this.tallyOfResult(jobId, returnvalue)));
    events.on("failed", ({ jobId, failedReason }) => void this.onJobFinished(jobId, { kind: "failed", code: failureCodeOf(failedReason) }));
    events.on("error", (error) => this.health.noteError(error));
    // A stalled job (its worker died or froze past the lock) is retried by BullMQ: count it by campaign.
    events.on("stalled", ({ jobId }) => {
      const ref = parseEpisodeJobId(jobId);
      this.metrics?.episodeRetry("stalled");
      if (ref) void this.store.countRetry(ref.campaignId, "STALLED").catch(() => undefined);
    });
    await events.waitUntilReady();
    await this.reconcileAll();
    // While Redis is down the loops skip their turn (the outage is logged once by RedisHealth).
    const loop = (name: string, fn: () => Promise<void>) => () => {
      if (!this.health.up) return;
      void fn().catch((e: Error) => {
        if (this.health.up) this.log.warn({ event: `scheduler:${name}-failed`, error: e.message }, `${name} failed`);
      });
    };
    this.timers.push(setInterval(loop("tick", () => this.tick()), this.cfg.tickMs));
    this.timers.push(setInterval(loop("reconcile", () => this.reconcileAll()), this.cfg.reconcileMs));
    this.log.info({ event: "scheduler:started", prefix: this.cfg.prefix, windowSize: this.cfg.windowSize }, "scheduler started");
  }

  submit(input: unknown): Promise<SubmitResult> {
    this.assertOpen();
    return this.answering("submit the campaign", () => this.submitNow(input), API_WRITE_TIMEOUT_MS);
  }

  private async submitNow(input: unknown): Promise<SubmitResult> {
    const parsed = parseCampaignInput(input);
    const task = this.catalog.get(parsed.taskId);
    if (!task) {
      const known = this.catalog.ids();
      throw new SchedulerError(
        "TASK_UNKNOWN",
        `unknown task '${parsed.taskId}': not in the scheduler's task folder (${this.catalog.describe()}); known: ${known.join(", ") || "(none)"}`,
      );
    }
    if (parsed.taskHash !== undefined && parsed.taskHash !== task.hash) {
      throw new SchedulerError(
        "TASK_HASH_MISMATCH",
        `task '${parsed.taskId}' hash mismatch: submitted ${parsed.taskHash.slice(0, 12)}…, the scheduler's task folder has ${task.hash.slice(0, 12)}… (the task file changed; use the same file as the farm)`,
      );
    }
    const refused = parsed.options.resetMode === "start-snapshot" ? startSnapshotRefusal(task.task) : undefined;
    if (refused) throw new SchedulerError("SPEC_INVALID", `invalid campaign: options.resetMode: start-snapshot is refused: ${refused}`);
    const configured = parsed.goals?.findIndex((g) => g.gameConfig !== undefined) ?? -1;
    const gameRefused = configured >= 0 ? gameConfigRefusal(task.task, parsed.options.resetMode ?? (parsed.options.resetFromSnapshot ? "setup-snapshot" : "steps")) : undefined;
    if (gameRefused) throw new SchedulerError("SPEC_INVALID", `invalid campaign: goals.${configured}.gameConfig is refused: ${gameRefused}`);
    const goalsRefused = goalsRefusal(task, parsed.goals);
    if (goalsRefused) throw new SchedulerError("SPEC_INVALID", `invalid campaign: ${goalsRefused}`);
    const policy = typeof parsed.policy === "string" ? { spec: parsed.policy } : parsed.policy;
    const keyRefused = this.cfg.llmKeyHosts ? llmSpecKeyProblem(policy.spec, this.cfg.llmKeyHosts) : undefined;
    if (keyRefused) throw new SchedulerError("SPEC_INVALID", `invalid campaign: policy: ${keyRefused}`);
    const grouping = {
      ...(parsed.groupSize !== undefined ? { groupSize: parsed.groupSize } : {}),
      ...(parsed.resampleUniformGroups !== undefined ? { resampleUniformGroups: parsed.resampleUniformGroups } : {}),
    };
    const work = { taskId: task.task.id, taskHash: task.hash, policy, episodes: parsed.episodes, baseSeed: parsed.baseSeed, options: parsed.options, ...(parsed.goals ? { goals: parsed.goals } : {}), ...grouping };
    const spec: CampaignSpec = { id: parsed.id ?? deriveCampaignId(work), priority: parsed.priority, ...work };
    const r = await this.store.create(spec, Date.now());
    if (!r.created && campaignIdentity(r.existing) !== campaignIdentity(spec)) {
      throw new SchedulerError("CAMPAIGN_CONFLICT", `campaign '${spec.id}' already exists with a different task, policy, episodes, seed or options; choose another --id`);
    }
    if (r.created) {
      this.log.info({ event: "campaign:submitted", campaignId: spec.id, taskId: spec.taskId, episodes: spec.episodes, policy: spec.policy.spec, priority: spec.priority, goals: spec.goals?.length ?? 0, ...grouping, ...(task.family ? { family: true, fixedParams: spec.goals?.filter((g) => g.params !== undefined).length ?? 0 } : {}) }, "campaign submitted");
    } else {
      this.log.info({ event: "campaign:resubmitted", campaignId: spec.id }, "campaign already exists; nothing added");
    }
    if (this.cfg.enqueueOnSubmit) await this.requestTopUp(spec.id);
    return { created: r.created, campaign: await this.statusNow(spec.id) };
  }

  status(id: string): Promise<CampaignStatus> {
    return this.answering("read the campaign", () => this.statusNow(id));
  }

  private async statusNow(id: string): Promise<CampaignStatus> {
    const rec = await this.record(id);
    const key = episodeStreamKey(this.cfg.prefix, id);
    const [inFlight, running, commits, length, groups] = await Promise.all([this.store.inflightCount(id), this.runningByCampaign(), this.store.commitStats(id), this.redis.xlen(key), streamGroups(this.redis, key)]);
    const status = statusOf(rec, inFlight, running.get(id) ?? 0, Date.now(), commits);
    status.stream = { length, consumerGroups: groups.slice(0, 20).map((g) => ({ name: g.name, pending: g.pending, lag: g.lag })) };
    return status;
  }

  /**
   * Up to `count` committed episodes of the campaign's stream for `consumer` of consumer group `group` (created at the
   * stream's start on first use): its pending entries (delivered, not acknowledged) first, else new ones; with `from`,
   * only pending ones after an entry id (a client paging through them while it holds some unacknowledged) or only new
   * ones. Never waits.
   */
  streamRead(id: string, group: string, consumer: string, count: number, from?: { pendingAfter: string } | "new"): Promise<{ entries: ({ id: string } & Partial<EpisodeStreamMessage>)[] }> {
    return this.answering("read the campaign's stream", async () => {
      await this.record(id);
      checkStreamName("group", group);
      checkStreamName("consumer", consumer);
      if (typeof from === "object" && !/^(0|\d{1,20}-\d{1,20})$/.test(from.pendingAfter)) throw new SchedulerError("SPEC_INVALID", "after: a stream entry id <ms>-<seq> (or 0)");
      const n = Math.min(Math.max(1, Math.trunc(count) || 1), 1000);
      const c = EpisodeStreamConsumer.forCampaign(this.redis, this.cfg.prefix, id, group, consumer);
      const entries = from === undefined ? await c.read(n) : from === "new" ? await c.readNew(n) : await c.readPending(n, from.pendingAfter);
      return { entries: entries.map((e) => ({ id: e.id, ...(e.message ?? {}) })) };
    });
  }

  /** Acknowledges entries of the campaign's stream for consumer group `group`; returns how many were pending. */
  streamAck(id: string, group: string, ids: readonly string[]): Promise<{ acked: number }> {
    return this.answering("acknowledge stream entries", async () => {
      assertKnownIdShape(id);
      checkStreamName("group", group);
      if (ids.length > 1000 || ids.some((i) => typeof i !== "string" || !/^\d{1,20}-\d{1,20}$/.test(i))) throw new SchedulerError("SPEC_INVALID", "ids: at most 1000 stream entry ids of the form <ms>-<seq>");
      return { acked: await new EpisodeStreamConsumer(this.redis, episodeStreamKey(this.cfg.prefix, id), group, "-").ack(ids) };
    });
  }

  /** The live fleet from the workers' device heartbeats (@farm/queue device-heartbeats.ts). */
  devices(): Promise<{ devices: DeviceBeat[]; invalid: number }> {
    return this.answering("read the device heartbeats", () => readDeviceBeats(this.redis, this.cfg.prefix));
  }

  /** Newest first. */
  list(limit = 100): Promise<CampaignStatus[]> {
    return this.answering("list campaigns", () => this.listNow(limit));
  }

  private async listNow(limit: number): Promise<CampaignStatus[]> {
    const ids = await this.store.listIds(limit);
    const running = await this.runningByCampaign();
    const out: CampaignStatus[] = [];
    for (const id of ids) {
      const rec = await this.store.get(id);
      if (rec) out.push(statusOf(rec, await this.store.inflightCount(id), running.get(id) ?? 0, Date.now(), await this.store.commitStats(id)));
    }
    return out;
  }

  /** Stops enqueuing, removes waiting/delayed jobs; running episodes finish and are counted. */
  cancel(id: string): Promise<CampaignStatus> {
    this.assertOpen();
    return this.answering("cancel the campaign", () => this.cancelNow(id), API_WRITE_TIMEOUT_MS);
  }

  private async cancelNow(id: string): Promise<CampaignStatus> {
    assertKnownIdShape(id);
    const was = await this.store.cancel(id, Date.now());
    if (was === undefined) throw new SchedulerError("CAMPAIGN_NOT_FOUND", `no campaign '${id}'`);
    const removed = await this.removeQueuedJobs(id);
    if (was === "running") this.log.info({ event: "campaign:cancelled", campaignId: id, removedJobs: removed }, "campaign cancelled");
    await this.maybeFinish(id);
    return this.statusNow(id);
  }

  /**
   * Raises the campaign's current policy version (issue 38; `@farm/queue` policy-versions.ts): `{version}` (a string of
   * 1-128 printable characters or a whole number). The same version again changes nothing; one that would go back
   * (a lower whole number, or a version raised before) is VERSION_CONFLICT. Workers see it within a second.
   */
  raisePolicyVersion(id: string, body: unknown): Promise<CampaignPolicyVersion> {
    this.assertOpen();
    return this.answering("raise the campaign's policy version", () => this.raiseNow(id, body), API_WRITE_TIMEOUT_MS);
  }

  private async raiseNow(id: string, body: unknown): Promise<CampaignPolicyVersion> {
    const input = raiseVersionInputSchema.safeParse(body);
    if (!input.success) throw new SchedulerError("SPEC_INVALID", `invalid policy version: ${input.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ")}; send {"version": "<1-128 printable characters>" | <whole number>}`);
    await this.record(id);
    const version = input.data.version;
    const r = await raisePolicyVersion(this.redis, this.cfg.prefix, id, version);
    if (r.result === "lower" || r.result === "seen") {
      const why = r.result === "lower" ? `is below the current version ${JSON.stringify(r.current)}` : `was raised before (current: ${JSON.stringify(r.current)})`;
      throw new SchedulerError("VERSION_CONFLICT", `campaign '${id}': version ${JSON.stringify(version)} ${why}; versions only go forward`);
    }
    if (r.result === "raised") this.log.info({ event: "campaign:policy-version", campaignId: id, version: terminalSafe(version), previous: terminalSafe(r.previous ?? "") }, "campaign policy version raised");
    return { campaignId: id, version: r.current, ...(r.previous !== undefined ? { previous: r.previous } : {}), raised: r.result === "raised", versions: r.versions };
  }

  /** The campaign's current policy version and how many it has raised (kept); `version` absent when none was raised. */
  policyVersion(id: string): Promise<CampaignPolicyVersion> {
    return this.answering("read the campaign's policy version", async () => {
      await this.record(id);
      const v = await readPolicyVersions(this.redis, this.cfg.prefix, id);
      return { campaignId: id, ...(v ? { version: v.current } : {}), versions: v?.order.length ?? 0 };
    });
  }

  /** One pass of the safety loop over unfinished campaigns (also driven by the timer). */
  async tick(): Promise<void> {
    let lag = 0;
    let pending = 0;
    for (const id of await this.store.activeIds()) {
      for (const g of await streamGroups(this.redis, episodeStreamKey(this.cfg.prefix, id)).catch(() => [])) {
        lag = Math.max(lag, g.lag ?? 0);
        pending = Math.max(pending, g.pending);
      }
      const rec = await this.store.get(id);
      if (!rec) {
        await this.store.forgetActive(id); // its record was deleted (e.g. Redis cleaned by hand)
        continue;
      }
      if (rec.state === "cancelled") await this.removeQueuedJobs(id);
      await this.requestTopUp(id);
    }
    this.metrics?.setStreamConsumerLag(lag, pending);
  }

  /** Counts finished in-flight jobs whose events were missed; re-adds claimed jobs that never reached the queue. */
  async reconcileAll(): Promise<void> {
    for (const id of await this.store.activeIds()) await this.reconcile(id);
  }

  /** Stops timers and events, then closes the queue and the Redis client. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const t of this.timers) clearInterval(t);
      this.timers = [];
      await this.events?.close();
      await Promise.allSettled([...this.topUps.values()].map((t) => t.done));
      this.health.close();
      await this.queue.close();
      await Promise.all(this.ownedConnections.map((c) => c.close()));
      await this.redis.quit().catch(() => this.redis.disconnect());
      this.log.info({ event: "scheduler:closed" }, "scheduler closed");
    })();
    return this.closing;
  }

  // --- internals -----------------------------------------------------------------------------

  private assertOpen(): void {
    if (this.closing) throw new SchedulerError("CLOSED", "the scheduler is shutting down");
  }

  private async record(id: string): Promise<CampaignRecord> {
    assertKnownIdShape(id);
    const rec = await this.store.get(id);
    if (!rec) throw new SchedulerError("CAMPAIGN_NOT_FOUND", `no campaign '${id}'`);
    this.specs.set(id, rec.spec);
    return rec;
  }

  private async specOf(id: string): Promise<CampaignSpec> {
    return this.specs.get(id) ?? (await this.record(id)).spec;
  }

  /** Running jobs per campaign, from the queue's active list (as long as the farm has devices: small). */
  private async runningByCampaign(): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    for (const jobId of await this.queue.getRanges(["active"], 0, -1)) {
      const ref = parseEpisodeJobId(jobId);
      if (ref) counts.set(ref.campaignId, (counts.get(ref.campaignId) ?? 0) + 1);
    }
    return counts;
  }

  private tallyOfResult(jobId: string, returnvalue: unknown): EpisodeTally {
    try {
      const r = parseEpisodeJobResult(typeof returnvalue === "string" ? JSON.parse(returnvalue) : returnvalue, jobId);
      return { kind: "completed", outcome: r.outcome, cause: r.cause, reward: r.reward, steps: r.steps };
    } catch (e) {
      // A worker bug must not stall the campaign: count it, under a cause that says what happened.
      this.log.warn({ event: "episode:result-invalid", jobId, error: coerceError(e).message }, "episode result does not match the schema");
      return { kind: "completed", outcome: "unknown", cause: "result_invalid", reward: 0, steps: 0 };
    }
  }

  private async onJobFinished(jobId: string, tally: EpisodeTally): Promise<void> {
    const ref = parseEpisodeJobId(jobId);
    if (!ref) return;
    try {
      const spec = await this.specOf(ref.campaignId);
      const r = await this.store.recordWithGroup(ref.campaignId, ref.episodeIndex, tally, Date.now(), spec);
      if (r.counted) {
        this.noteGroup(spec, ref.episodeIndex, r.group);
        await this.requestTopUp(ref.campaignId);
      }
    } catch (e) {
      this.log.warn({ event: "episode:count-failed", jobId, error: coerceError(e).message }, "could not count a finished episode (reconcile will retry)");
    }
  }

  /** One log line and a count per group that completed (grouped campaigns). */
  private noteGroup(spec: CampaignSpec, index: number, event: GroupEvent): void {
    if (event === "none" || !spec.groupSize) return;
    this.metrics?.groupFinished(event);
    this.log.info({ event: "group:finished", campaignId: spec.id, groupIndex: Math.floor(index / spec.groupSize), groupSize: spec.groupSize, result: event }, event === "resampled" ? "group complete with equal rewards; a new instance was added" : "group finished");
  }

  /** Runs top-up + finish for one campaign, coalescing concurrent requests into at most one more pass. */
  private requestTopUp(id: string): Promise<void> {
    const pending = this.topUps.get(id);
    if (pending) {
      pending.again = true;
      return pending.done;
    }
    const entry = { again: true, done: Promise.resolve() };
    entry.done = (async () => {
      while (entry.again && !this.closing) {
        entry.again = false;
        await this.topUp(id);
        await this.maybeFinish(id);
      }
    })().finally(() => this.topUps.delete(id));
    this.topUps.set(id, entry);
    return entry.done;
  }

  private jobFor(spec: CampaignSpec, index: number): { name: string; data: EpisodeJobData; opts: JobsOptions } {
    // A group's members share the instance: seed, goal line and params of the group's index (one task instance).
    const group = spec.groupSize ? groupOf(spec.groupSize, index) : undefined;
    const instance = group ? group.index : index;
    return {
      // Readable in the queue UI and logs: `<task>#<index>` (the job id stays `<campaign>-<index>`).
      name: `${spec.taskId}#${index}`,
      data: {
        v: 1,
        campaignId: spec.id,
        episodeIndex: index,
        taskId: spec.taskId,
        taskHash: spec.taskHash,
        policy: spec.policy,
        seed: episodeSeed(spec.baseSeed, instance),
        options: spec.options,
        ...goalForEpisode(spec.goals, instance),
        ...(group ? { group } : {}),
      },
      opts: { ...defaultEpisodeJobOptions, jobId: episodeJobId(spec.id, index), priority: bullPriority(spec.priority) },
    };
  }

  private async topUp(id: string): Promise<void> {
    const spec = await this.specOf(id);
    let added = 0;
    let first = -1;
    for (;;) {
      const { start, count } = await this.store.claim(id, this.cfg.windowSize, ENQUEUE_BATCH);
      if (count === 0) break;
      if (first < 0) first = start;
      // If this throws, the claimed indexes stay in flight without jobs; reconcile re-adds them.
      await this.queue.addBulk(Array.from({ length: count }, (_, i) => this.jobFor(spec, start + i)));
      added += count;
      // A short batch was cut by the window or the campaign's end: asking again would claim nothing (a
      // completion meanwhile asks for another pass of its own, see requestTopUp).
      if (count < ENQUEUE_BATCH) break;
    }
    if (first === 0) {
      // Index 0 is claimed exactly once farm-wide, so this counts each campaign once across processes,
      // in the process that starts it (whether it was submitted over HTTP or straight into Redis).
      this.metrics?.campaignSubmitted();
      this.log.info({ event: "campaign:started", campaignId: id }, "first episode jobs enqueued");
    }
    if (added > 0) {
      this.metrics?.jobsEnqueued(spec.taskId, added);
      this.log.debug({ event: "campaign:topped-up", campaignId: id, added, fromIndex: first }, "episode jobs enqueued");
    }
  }

  private async removeQueuedJobs(id: string): Promise<number> {
    let removed = 0;
    for (const index of await this.store.inflight(id)) {
      const jobId = episodeJobId(id, index);
      const state = await this.queue.getJobState(jobId);
      if (REMOVABLE_STATES.has(state)) {
        // 0 = the job got locked by a worker meanwhile: it runs to the end and is counted.
        if ((await this.queue.remove(jobId)) === 1) {
          await this.store.dropInflight(id, index);
          removed++;
        }
      } else if (state === "unknown" && !(await this.store.isDone(id, index))) {
        await this.store.dropInflight(id, index);
      }
    }
    return removed;
  }

  private async reconcile(id: string): Promise<void> {
    const rec = await this.store.get(id);
    if (!rec) return;
    const spec = rec.spec;
    for (const index of await this.store.inflight(id)) {
      const jobId = episodeJobId(id, index);
      const state = await this.queue.getJobState(jobId);
      if (state === "completed" || state === "failed") {
        const job = await this.queue.getJob(jobId);
        if (!job) continue;
        const tally: EpisodeTally = state === "completed" ? this.tallyOfResult(jobId, job.returnvalue) : { kind: "failed", code: failureCodeOf(job.failedReason) };
        const r = await this.store.recordWithGroup(id, index, tally, Date.now(), spec);
        if (r.counted) this.noteGroup(spec, index, r.group);
      } else if (state === "unknown" && !(await this.store.isDone(id, index))) {
        if (rec.state === "running") {
          const j = this.jobFor(spec, index);
          await this.queue.add(j.name, j.data, j.opts);
          this.log.warn({ event: "campaign:job-restored", campaignId: id, jobId }, "claimed episode had no job; re-added");
        } else {
          await this.store.dropInflight(id, index);
        }
      }
    }
    await this.requestTopUp(id);
  }

  private async maybeFinish(id: string): Promise<void> {
    const rec = await this.store.get(id);
    if (!rec || rec.finishedAtMs !== undefined) return;
    const now = Date.now();
    let to: "completed" | "failed" | "cancelled" | undefined;
    if (rec.state === "running" && rec.completed + rec.failed >= rec.episodes) to = rec.completed > 0 ? "completed" : "failed";
    else if (rec.state === "cancelled" && (await this.store.inflightCount(id)) === 0) to = "cancelled";
    if (!to) return;
    const summary = summarize(rec, to, now, await this.store.commitStats(id));
    if (await this.store.finish(id, rec.state, to, summary, now)) {
      await this.store.expireCommits(id, CLAIMS_TTL_SEC);
      this.log.info({ event: "campaign:finished", campaignId: id, ...summary }, "campaign finished");
    }
  }
}
