/**
 * What one device does with one episode job: check the task, complete from the farm-wide claim when the
 * episode is committed already (on any host), else run it, publish the file on this host, claim it (the
 * commit), and answer BullMQ:
 *   result            → job completed (the scheduler counts it from the returned EpisodeJobResult)
 *   JobRejectedError  → failed now, no retry (unknown task, hash mismatch, bad payload/policy)
 *   plain Error       → retried with backoff, ahead of the campaign's new episodes (device trouble;
 *                       preferably elsewhere: a device that became unusable stops taking jobs)
 *   DelayedError      → BullMQ leaves the job alone: handed back by a drain (no attempt used), or the
 *                       lock was lost (the attempt that owns the job now decides)
 * What to do after the episode is `decideAttempt` (retry-decision.ts); the commit is `commitEpisode` (commit-episode.ts).
 */
import { taskServerOptions } from "./task-server-options.ts";
import { stat } from "node:fs/promises";
import { DelayedError, UnrecoverableError, type Job } from "bullmq";
import { EpisodeError, type DeviceSession, type EpisodeLimitOverrides, type EpisodeTrajectory, type StalenessOptions } from "@farm/episode";
import type { CampaignVersionCache } from "./campaign-versions.ts";
import type { Logger } from "@farm/log";
import type { Policy } from "@farm/policy";
import type { FarmMetrics } from "@farm/metrics";
import {
  JobRejectedError,
  formatFailureReason,
  resolveEpisodeJob,
  prioritizeRetry,
  type ClaimOwner,
  type CommitArbiter,
  type EpisodeClaim,
  type EpisodeJobData,
  type EpisodeJobResult,
  type EpisodeOptions,
  type EpisodeRef,
  type QueueErrorCode,
} from "@farm/queue";
import { episodeIdOf, type EpisodeRecord } from "@farm/trajectory";
import type { LoadedTask } from "@farm/task";
import { settleAgainstClaim, type CommitDeps } from "./commit-flow.ts";
import { claimPublished, commitEpisode, fromStored } from "./commit-episode.ts";
import type { EpisodeStore } from "./episode-store.ts";
import type { FaultHooks } from "./fault-hooks.ts";
import { frameEncodingOf } from "./frame-encoding.ts";
import { policyForJob } from "./policy-resolver.ts";
import type { OperatorEpisode } from "./operator-relay.ts";
import type { PolicyTransport } from "./policy-transport.ts";
import { attemptsLeft, decideAttempt, type AttemptDecision, type AttemptFacts } from "./retry-decision.ts";
import { DEVICE_UNUSABLE_CODE, sessionFailureCode } from "./failure-codes.ts";
import { coerceError } from "@farm/errors";
import { jobParams, taskInstanceFor } from "./task-instance.ts";

/** What the processor needs from its device slot. */
export interface ProcessorContext {
  serial: string;
  workerName: string;
  tasksById: ReadonlyMap<string, LoadedTask>;
  policyDir: string | undefined;
  /** Hosts `http:` policies may reach besides loopback (FARM_POLICY_ALLOWED_HOSTS). */
  policyAllowedHosts?: readonly string[];
  /** Hosts a family's task server may be on besides loopback (FARM_TASK_SERVER_ALLOWED_HOSTS). */
  taskServerAllowedHosts?: readonly string[];
  /** The host's remote-policy batcher and exchange metrics. */
  policyTransport?: PolicyTransport;
  /** The campaigns' current policy versions (staleness, issue 38); without it only the span of an episode's versions counts. */
  campaignVersions?: Pick<CampaignVersionCache, "read">;
  store: EpisodeStore;
  /** The farm-wide commit arbiter (claims in Redis). */
  arbiter: CommitArbiter;
  /** Fault injection (chaos bench only; inert unless FARM_FAULT_INJECT is set). */
  faults: FaultHooks;
  metrics: FarmMetrics;
  logger: Logger;
  /** Bound session for the task (binds when needed). */
  sessionFor(task: LoadedTask): Promise<DeviceSession>;
  /** Aborted when the worker drains past its grace period: the running episode is handed back. */
  drainSignal: AbortSignal;
  /** The device cannot run episodes any more: stop taking jobs on it (must not wait for this job). */
  retire(reason: string): void;
  /** Pause taking jobs, run `recover` (the session's recovery), then resume or retire. Must not wait for this job. */
  recoverInBackground(recover: () => Promise<unknown>): void;
  /** Busy/idle, for the device gauge. */
  setBusy(busy: boolean): void;
}

/** A retryable failure whose failedReason starts with its code (a plain Error: BullMQ retries it). */
const retryable = (code: QueueErrorCode, detail: string): Error => new Error(formatFailureReason(code, detail));

/** Why BullMQ's abort signal fired when it could not renew the job's lock (see device-slot.ts). */
export const LOCK_LOST_REASON = "lock_lost";

/** What the job's BullMQ options and history say about its attempts. */
type JobAttempts = Pick<AttemptFacts, "attemptsMade" | "attempts">;

const ref = (d: EpisodeJobData): EpisodeRef => ({ campaignId: d.campaignId, episodeIndex: d.episodeIndex });

/** Everything the commit of one finished episode needs. */
interface CommitInput {
  job: Job;
  ref: EpisodeRef;
  /** The finished trajectory with what the data set keeps of the job (id, attempt, frame policy…). */
  record: EpisodeRecord & { frameEvery: number };
  finalFile: string;
  owner: ClaimOwner | undefined;
  log: Logger;
  taskId: string;
}

/** The job's limits for `runEpisode` (each overrides the task's or the session config's for this episode). */
function limitsOf(o: EpisodeOptions): EpisodeLimitOverrides {
  return {
    ...(o.maxEpisodeSteps !== undefined ? { maxEpisodeSteps: o.maxEpisodeSteps } : {}),
    ...(o.maxEpisodeSec !== undefined ? { maxEpisodeSec: o.maxEpisodeSec } : {}),
    ...(o.stepTimeoutMs !== undefined ? { stepTimeoutMs: o.stepTimeoutMs } : {}),
    ...(o.policyTimeoutMs !== undefined ? { policyTimeoutMs: o.policyTimeoutMs } : {}),
    ...(o.maxInvalidActions !== undefined ? { maxInvalidActions: o.maxInvalidActions } : {}),
    ...(o.observationBudget ? { observationBudget: { maxBytes: o.observationBudget.maxMb * 1024 * 1024, ...(o.observationBudget.onExceeded ? { onExceeded: o.observationBudget.onExceeded } : {}) } } : {}),
  };
}

/** The job's goal, game config and a11y cadence for `runEpisode` (absent: the task's description, its own config, no trees). */
function agentOptionsOf(d: EpisodeJobData): { goal?: string; gameConfig?: Record<string, unknown>; a11yEvery?: number; settle?: string } {
  return {
    ...(d.options.settle !== undefined ? { settle: d.options.settle } : {}),
    ...(d.goal !== undefined ? { goal: d.goal } : {}),
    ...(d.gameConfig !== undefined ? { gameConfig: d.gameConfig } : {}),
    ...(d.options.a11yEvery !== undefined ? { a11yEvery: d.options.a11yEvery } : {}),
  };
}

/** What the operator page shows of a `human` episode, and its grace, idle and wait limits (absent: the worker's). */
function operatorEpisodeOf(d: EpisodeJobData, task: LoadedTask, episodeId: string, serial: string): OperatorEpisode | undefined {
  if (d.policy.spec !== "human") return undefined;
  const o = d.options.operator;
  const ms = (sec: number | undefined) => (sec === undefined ? undefined : Math.round(sec * 1000));
  const limits = { graceMs: ms(o?.graceSec), idleMs: ms(o?.idleSec), waitMs: ms(o?.waitSec), maxSteps: d.options.maxEpisodeSteps ?? task.task.maxEpisodeSteps, maxSec: d.options.maxEpisodeSec ?? task.task.maxEpisodeSec };
  const defined = Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined && v > 0)) as Partial<OperatorEpisode>;
  return { episodeId, campaignId: d.campaignId, episodeIndex: d.episodeIndex, taskId: task.task.id, goal: d.goal ?? task.task.description ?? "", serial, ...defined };
}

/** The processor of a device: `process` is what BullMQ calls with each of the device's jobs. */
export function createEpisodeProcessor(ctx: ProcessorContext): (job: Job, token?: string, bullSignal?: AbortSignal) => Promise<EpisodeJobResult> {
  const processor = new EpisodeProcessor(ctx);
  return (job, token, bullSignal) => processor.process(job, token, bullSignal);
}

class EpisodeProcessor {
  private readonly commitDeps: CommitDeps;

  constructor(private readonly ctx: ProcessorContext) {
    this.commitDeps = { store: ctx.store, arbiter: ctx.arbiter, metrics: ctx.metrics, logger: ctx.logger, workerName: ctx.workerName };
  }

  /** Counts a retry (Redis stats by campaign, metric by cause) and moves the job ahead of its campaign's new episodes. */
  private async noteRetry(job: Job, ref: EpisodeRef, code: QueueErrorCode, log: Logger): Promise<void> {
    this.ctx.metrics.episodeRetry(code);
    await this.ctx.arbiter.count(ref.campaignId, `retry:${code}`).catch(() => undefined);
    // Retries go first: BullMQ keeps the job's priority through backoff and re-queueing.
    if (!(await prioritizeRetry(job))) log.debug({ event: "job:priority-unchanged" }, "the retry keeps its priority");
  }

  /** The lock is gone: another attempt owns the job. Nothing is committed or answered. */
  private lockLost(ref: EpisodeRef, log: Logger, episodeId: string): never {
    this.ctx.metrics.commit("lock_lost");
    this.ctx.metrics.episodeRetry("LOCK_LOST");
    void this.ctx.arbiter.count(ref.campaignId, "retry:LOCK_LOST").catch(() => undefined);
    log.warn({ event: "job:lock-lost", episodeId }, "lost the job's lock (stalled past the lock duration); not committing, the job's new owner decides");
    throw new DelayedError();
  }

  /** The episode is committed (claim exists): settle any file of ours against it and answer with its result. */
  private async completeFromClaim(ref: EpisodeRef, claim: EpisodeClaim, localFile: string | undefined, log: Logger, episodeId: string): Promise<EpisodeJobResult> {
    if (localFile) await settleAgainstClaim(this.commitDeps, ref, localFile, claim);
    await this.ctx.arbiter.count(ref.campaignId, "completedFromClaim");
    this.ctx.metrics.commit("completed_from_claim");
    log.info({ event: "episode:already-committed", episodeId, committedBy: claim.host, file: claim.location }, "episode is committed already; completing from its claim without running it");
    return claim.result;
  }

  /** A file of this episode on our storage that nobody claimed: it is complete, so claim it instead of re-running. */
  private async adoptUnclaimedFile(ref: EpisodeRef, localFile: string, owner: ClaimOwner | undefined, log: Logger, episodeId: string): Promise<EpisodeJobResult | undefined> {
    const record = await this.ctx.store.readRecord(localFile);
    if (!record) return undefined;
    const file = { path: localFile, checksum: await this.ctx.store.checksum(localFile), bytes: (await stat(localFile)).size, created: false };
    const out = await claimPublished(this.commitDeps, { ref, owner, origin: "campaign", log, record: { ...record, episodeId } }, file, record.attempt, fromStored(record, localFile));
    if (out.kind === "not-owner") return this.lockLost(ref, log, episodeId);
    return out.kind === "taken" ? out.claim.result : out.result;
  }

  /** The device's session for the task, ready to run; a task that cannot run is rejected, an unusable device retried elsewhere. */
  private async readySession(job: Job, task: LoadedTask, ref: EpisodeRef, facts: JobAttempts, log: Logger): Promise<DeviceSession> {
    let session: DeviceSession;
    try {
      session = await this.ctx.sessionFor(task);
    } catch (e) {
      const code = sessionFailureCode(e);
      if (code) {
        log.warn({ event: "job:rejected", reason: coerceError(e).message }, "task cannot run");
        throw new JobRejectedError(code, `job ${job.id}: ${coerceError(e).message}`);
      }
      throw e;
    }
    if (session.state === "ready") return session;
    // Unusable: this device stops taking jobs. Closed: the device is being unbound. Either way retry elsewhere.
    const why = session.state === "unusable" ? session.unusableReason : `session ${session.state}`;
    if (session.state === "unusable") this.ctx.retire(why);
    if (attemptsLeft(facts)) await this.noteRetry(job, ref, DEVICE_UNUSABLE_CODE, log);
    throw retryable(DEVICE_UNUSABLE_CODE, `device ${this.ctx.serial}: ${why}`);
  }

  /** Runs the episode, cancelled by a drain past its grace or by BullMQ losing the lock; device trouble is a retry elsewhere. */
  private async runOnSession(session: DeviceSession, job: Job, data: EpisodeJobData, task: LoadedTask, policy: Policy, bullSignal: AbortSignal | undefined, facts: JobAttempts, log: Logger): Promise<EpisodeTrajectory> {
    const ac = new AbortController();
    const onAbort = () => ac.abort();
    this.ctx.drainSignal.addEventListener("abort", onAbort, { once: true });
    bullSignal?.addEventListener("abort", onAbort, { once: true });
    if (this.ctx.drainSignal.aborted || bullSignal?.aborted) ac.abort();
    // A family's instance: the same parameters for episode i on every retry and host (drawn from the job's seed).
    const fixedParams = jobParams(data);
    const key = { campaignId: data.campaignId, index: data.episodeIndex, seed: data.seed, ...(fixedParams ? { fixedParams } : {}), ...(data.goal !== undefined ? { goal: data.goal } : {}) };
    const instance = taskInstanceFor(task, key, taskServerOptions(this.ctx.taskServerAllowedHosts ?? [], this.ctx.metrics, log));
    try {
      // deferRecovery: device trouble returns at once with the session needing recovery; we choose when.
      return await session.runEpisode({
        seed: data.seed,
        // A group's members share the instance (seed: params, set-up, reset) and sample apart: member m > 0 seeds its policy anew.
        ...(data.group && data.group.member > 0 ? { policySeed: memberPolicySeed(data.seed, data.group.member) } : {}),
        index: data.episodeIndex,
        policy,
        signal: ac.signal,
        limits: limitsOf(data.options),
        deferRecovery: true,
        ...(data.options.frameEvery !== undefined ? { frameEvery: data.options.frameEvery } : {}),
        ...frameEncodingOf(data.options.frameEncoding),
        ...(data.options.resetFromSnapshot ? { resetFromSnapshot: true } : {}),
        ...(data.options.resetMode ? { resetMode: data.options.resetMode } : {}),
        ...agentOptionsOf(data),
        ...(instance ? { instance } : {}),
        ...this.stalenessOf(data),
      });
    } catch (e) {
      // The task cannot run this way anywhere (e.g. start-snapshot for a seeded reset): no retry.
      if (EpisodeError.is(e) && e.code === "task_not_runnable") {
        log.warn({ event: "job:rejected", reason: e.message }, "job rejected");
        throw new UnrecoverableError(`job ${job.id}: ${e.message}`);
      }
      // DeviceUnusableError / session closed: another device may run it.
      if ((session.state as string) === "unusable") this.ctx.retire(session.unusableReason);
      if (attemptsLeft(facts)) await this.noteRetry(job, ref(data), DEVICE_UNUSABLE_CODE, log);
      throw retryable(DEVICE_UNUSABLE_CODE, `device ${this.ctx.serial}: ${coerceError(e).message}`);
    } finally {
      this.ctx.drainSignal.removeEventListener("abort", onAbort);
      bullSignal?.removeEventListener("abort", onAbort);
    }
  }

  /** The job's staleness option for `runEpisode`, reading the campaign's current version through the host's cache. */
  private stalenessOf(data: EpisodeJobData): { staleness?: StalenessOptions } {
    const s = data.options.staleness;
    if (!s) return {};
    const cache = this.ctx.campaignVersions;
    return { staleness: { maxVersions: s.maxVersions, onStale: s.onStale ?? "mark", ...(cache ? { campaignVersions: () => cache.read(data.campaignId) } : {}) } };
  }

  /** Carries out an attempt's decision other than a commit: each ends the attempt (throws). */
  private async endWithout(decision: Exclude<AttemptDecision, { kind: "commit" }>, job: Job, r: EpisodeRef, traj: EpisodeTrajectory, token: string | undefined, log: Logger, episodeId: string): Promise<never> {
    switch (decision.kind) {
      case "abandon":
        return this.lockLost(r, log, episodeId);
      case "hand-back":
        if (token) {
          // Hand the job back without using an attempt; another worker (or this one, restarted) runs it.
          await job.moveToDelayed(Date.now(), token);
          log.info({ event: "job:handed-back", episodeId }, "episode cancelled by drain; job handed back");
          throw new DelayedError();
        }
        throw retryable("CANCELLED", `job ${job.id}: episode cancelled`);
      case "retry":
        await this.noteRetry(job, r, decision.code, log);
        throw retryable(decision.code, decision.code === "CANCELLED" ? `job ${job.id}: episode cancelled` : `device ${this.ctx.serial}: ${traj.cause}: ${traj.causeDetail}`);
    }
  }

  /** Commits the episode (commit-episode.ts) and answers BullMQ: our result, the first commit's, or a lost lock. */
  private async commit(c: CommitInput): Promise<EpisodeJobResult> {
    const { job, ref: r, record, finalFile, owner, log, taskId } = c;
    const out = await commitEpisode(this.commitDeps, { ref: r, record, finalFile, owner, taskId, device: this.ctx.serial, origin: "campaign", jobId: job.id, log, faults: this.ctx.faults });
    if (out.kind === "not-owner") return this.lockLost(r, log, record.episodeId); // the marker stays: resolved once the episode has a claim
    return out.kind === "taken" ? out.claim.result : out.result;
  }

  async process(job: Job, token?: string, bullSignal?: AbortSignal): Promise<EpisodeJobResult> {
    const log = this.ctx.logger.child({ jobId: job.id, serial: this.ctx.serial });
    const attempt = Math.max(1, job.attemptsStarted || job.attemptsMade + 1);
    if (attempt === 1 && job.processedOn) this.ctx.metrics.jobStarted(Math.max(0, job.processedOn - job.timestamp) / 1000);

    let resolved: { data: EpisodeJobData; task: LoadedTask };
    try {
      resolved = resolveEpisodeJob(job.data, job.id, this.ctx.tasksById);
    } catch (e) {
      log.warn({ event: "job:rejected", reason: coerceError(e).message }, "job rejected");
      throw e;
    }
    const { data, task } = resolved;
    const r = ref(data);
    const episodeId = episodeIdOf(data.campaignId, data.episodeIndex);
    const owner: ClaimOwner | undefined = job.id && token ? { jobId: job.id, token } : undefined;
    // job.timestamp is when the job was added: the same for every attempt, so the path is too.
    const finalFile = this.ctx.store.finalPath(task.task.id, job.timestamp, episodeId);

    // 1. Committed already, on any host? Complete from the claim.
    // A file can only exist from an earlier start of this job (a crash or a lost lock between publish and claim):
    // the first start does not list the task's date folders. (A job re-added by reconcile starts afresh; a file
    // an earlier job left at this path is taken over by the publish, one in another day's folder by the sweep of
    // pending markers.)
    const localFile = attempt > 1 ? await this.ctx.store.findLocal(task.task.id, episodeId) : undefined;
    const claimed = await this.ctx.arbiter.lookup(r);
    if (claimed) return this.completeFromClaim(r, claimed, localFile, log, episodeId);
    // 2. A file of ours (a crash between publish and claim, or another host's on shared storage) nobody claimed.
    const adopted = localFile ? await this.adoptUnclaimedFile(r, localFile, owner, log, episodeId) : undefined;
    if (adopted) return adopted;

    const policy = await policyForJob(data.policy, this.ctx.policyDir, this.ctx.policyAllowedHosts, this.ctx.policyTransport, operatorEpisodeOf(data, task, episodeId, this.ctx.serial)).catch((e: unknown) => {
      if (e instanceof UnrecoverableError) log.warn({ event: "job:rejected", reason: e.message }, "job rejected");
      throw e;
    });
    this.ctx.setBusy(true);
    try {
      const facts: JobAttempts = { attemptsMade: job.attemptsMade, attempts: job.opts.attempts ?? 1 };
      const session = await this.readySession(job, task, r, facts, log);
      // Which goal this episode pursues (clipped; goals are checked printable when the job is read).
      const agent = { ...(data.goal !== undefined ? { goal: data.goal.slice(0, 120) } : {}), ...(data.gameConfig !== undefined ? { gameConfig: true } : {}) };
      log.info({ event: "episode:start", episodeId, taskId: task.task.id, seed: data.seed, attempt, ...agent }, "episode started");
      const traj = await this.runOnSession(session, job, data, task, policy, bullSignal, facts, log);
      const decision = decideAttempt({
        ...facts,
        cause: traj.cause,
        drained: this.ctx.drainSignal.aborted,
        lockLost: bullSignal?.aborted === true && bullSignal.reason === LOCK_LOST_REASON,
        needsRecovery: (session.state as string) === "needs_recovery",
        ...(data.options.operator?.onAbandon ? { onAbandon: data.options.operator.onAbandon } : {}),
      });
      // With a retry the job goes back to BullMQ at once (to another device) while this device recovers,
      // paused. A commit waits for recovery (the last attempt keeps the truncated episode as data).
      if (decision.recovery === "background") this.ctx.recoverInBackground(() => session.recover());
      else if (decision.recovery === "inline") await session.recover();
      // Recovery (a relaunch before the episode, or ours above on the last attempt) may have spent the budget.
      if ((session.state as string) === "unusable") this.ctx.retire(session.unusableReason);
      log.info({ event: "episode:end", episodeId, outcome: traj.outcome, cause: traj.cause, steps: traj.steps.length, reward: traj.totalReward, decision: decision.kind }, "episode ended");
      if (decision.kind !== "commit") return await this.endWithout(decision, job, r, traj, token, log, episodeId);

      // 3. Publish on this host, then claim farm-wide.
      const frameEvery = data.options.frameEvery ?? session.config.frameEvery;
      const group = data.group ? { groupIndex: data.group.index, groupMember: data.group.member, groupSize: data.group.size } : {};
      const record = { ...traj, ...group, episodeId, campaignId: data.campaignId, episodeIndex: data.episodeIndex, attempt, worker: this.ctx.workerName, taskDialect: task.dialect, frameEvery };
      return await this.commit({ job, ref: r, record, finalFile, owner, log, taskId: task.task.id });
    } finally {
      this.ctx.setBusy(false);
      await policy.close().catch(() => undefined);
    }
  }
}

/** The policy seed of member `member` of a group whose instance seed is `seed` (member 0 keeps the seed). */
export function memberPolicySeed(seed: number, member: number): number {
  return (seed + Math.imul(member, 0x9e3779b1)) >>> 0;
}
