/**
 * What one device does with one episode job: check the task, skip episodes already committed, run the
 * episode, commit its trajectory exactly once, and answer BullMQ:
 *   result            → job completed (the scheduler counts it from the returned EpisodeJobResult)
 *   JobRejectedError  → failed now, no retry (unknown task, hash mismatch, bad payload/policy)
 *   plain Error       → retried with backoff (device trouble; preferably elsewhere: a device that
 *                       became unusable stops taking jobs)
 *   DelayedError      → handed back without using an attempt (drain cancelled the episode)
 */
import { frameEncodingOf } from "./frame-encoding.ts";
import { DelayedError, UnrecoverableError, type Job } from "bullmq";
import { DEVICE_TROUBLE, EpisodeError, type DeviceSession, type EpisodeLimitOverrides, type EpisodeTrajectory } from "@farm/episode";
import type { Logger } from "@farm/log";
import type { FarmMetrics } from "@farm/metrics";
import {
  EPISODE_JOB_VERSION,
  JobRejectedError,
  formatFailureReason,
  parseEpisodeJobResult,
  resolveEpisodeJob,
  type EpisodeJobData,
  type EpisodeJobResult,
  type EpisodeOptions,
  type QueueErrorCode,
} from "@farm/queue";
import { episodeIdOf, type StoredEpisode } from "@farm/trajectory";
import type { LoadedTask } from "@farm/task";
import type { EpisodeStore } from "./episode-store.ts";
import { policyForJob } from "./policy-resolver.ts";
import { coerceError } from "@farm/errors";

/** What the processor needs from its device slot. */
export interface ProcessorContext {
  serial: string;
  workerName: string;
  tasksById: ReadonlyMap<string, LoadedTask>;
  policyDir: string | undefined;
  /** Hosts `http:` policies may reach besides loopback (FARM_POLICY_ALLOWED_HOSTS). */
  policyAllowedHosts?: readonly string[];
  store: EpisodeStore;
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

function resultOf(t: Pick<EpisodeTrajectory, "outcome" | "cause" | "totalReward" | "startedAt" | "endedAt"> & { steps: unknown[] }, file: string, worker: string, device: string): EpisodeJobResult {
  return {
    v: EPISODE_JOB_VERSION,
    outcome: t.outcome,
    cause: t.cause,
    steps: t.steps.length,
    reward: t.totalReward,
    durationMs: Math.max(0, t.endedAt.getTime() - t.startedAt.getTime()),
    trajectoryFile: file,
    worker,
    device,
  };
}

const fromStored = (e: StoredEpisode, file: string): EpisodeJobResult => resultOf(e, file, e.worker, e.deviceSerial);

/** A retryable failure whose failedReason starts with its code (a plain Error: BullMQ retries it). */
const retryable = (code: QueueErrorCode, detail: string): Error => new Error(formatFailureReason(code, detail));

/** The job's limits for `runEpisode` (each overrides the task's or the session config's for this episode). */
function limitsOf(o: EpisodeOptions): EpisodeLimitOverrides {
  return {
    ...(o.maxEpisodeSteps !== undefined ? { maxEpisodeSteps: o.maxEpisodeSteps } : {}),
    ...(o.maxEpisodeSec !== undefined ? { maxEpisodeSec: o.maxEpisodeSec } : {}),
    ...(o.stepTimeoutMs !== undefined ? { stepTimeoutMs: o.stepTimeoutMs } : {}),
  };
}

export function createEpisodeProcessor(ctx: ProcessorContext) {
  return async function processEpisodeJob(job: Job, token?: string, bullSignal?: AbortSignal): Promise<EpisodeJobResult> {
    const log = ctx.logger.child({ jobId: job.id, serial: ctx.serial });
    const attempt = Math.max(1, job.attemptsStarted || job.attemptsMade + 1);
    if (attempt === 1 && job.processedOn) ctx.metrics.jobStarted(Math.max(0, job.processedOn - job.timestamp) / 1000);

    let resolved: { data: EpisodeJobData; task: LoadedTask };
    try {
      resolved = resolveEpisodeJob(job.data, job.id, ctx.tasksById);
    } catch (e) {
      log.warn({ event: "job:rejected", reason: coerceError(e).message }, "job rejected");
      throw e;
    }
    const { data, task } = resolved;
    const episodeId = episodeIdOf(data.campaignId, data.episodeIndex);
    // job.timestamp is when the job was added: the same for every attempt, so the path is too.
    const finalFile = ctx.store.finalPath(task.task.id, job.timestamp, episodeId);

    const committedFile = await ctx.store.findCommitted(task.task.id, episodeId);
    const committed = committedFile ? await ctx.store.readCommitted(committedFile) : undefined;
    if (committedFile && committed) {
      log.info({ event: "episode:already-committed", episodeId, file: committedFile }, "episode was committed by an earlier attempt; not running it again");
      return fromStored(committed, committedFile);
    }

    const policy = await policyForJob(data.policy, ctx.policyDir, ctx.policyAllowedHosts).catch((e: unknown) => {
      if (e instanceof UnrecoverableError) log.warn({ event: "job:rejected", reason: e.message }, "job rejected");
      throw e;
    });
    ctx.setBusy(true);
    try {
      let session: DeviceSession;
      try {
        session = await ctx.sessionFor(task);
      } catch (e) {
        if (EpisodeError.is(e) && !e.retryable) {
          log.warn({ event: "job:rejected", reason: e.message }, "task cannot run");
          throw new JobRejectedError("TASK_NOT_RUNNABLE", `job ${job.id}: ${e.message}`);
        }
        throw e;
      }
      if (session.state !== "ready") {
        // Unusable: this device stops taking jobs. Closed: the device is being unbound. Either way retry elsewhere.
        const why = session.state === "unusable" ? session.unusableReason : `session ${session.state}`;
        if (session.state === "unusable") ctx.retire(why);
        throw retryable("DEVICE_UNUSABLE", `device ${ctx.serial}: ${why}`);
      }

      const ac = new AbortController();
      const onAbort = () => ac.abort();
      ctx.drainSignal.addEventListener("abort", onAbort, { once: true });
      bullSignal?.addEventListener("abort", onAbort, { once: true });
      if (ctx.drainSignal.aborted || bullSignal?.aborted) ac.abort();
      log.info({ event: "episode:start", episodeId, taskId: task.task.id, seed: data.seed, attempt }, "episode started");
      const attemptsLeft = job.attemptsMade + 1 < (job.opts.attempts ?? 1);
      let traj: EpisodeTrajectory;
      try {
        // deferRecovery: device trouble returns at once with the session needing recovery; we choose when.
        traj = await session.runEpisode({
          seed: data.seed,
          index: data.episodeIndex,
          policy,
          signal: ac.signal,
          limits: limitsOf(data.options),
          deferRecovery: true,
          ...(data.options.frameEvery !== undefined ? { frameEvery: data.options.frameEvery } : {}),
          ...frameEncodingOf(data.options.frameEncoding),
          ...(data.options.resetFromSnapshot ? { resetFromSnapshot: true } : {}),
        });
      } catch (e) {
        // DeviceUnusableError / session closed: another device may run it.
        if ((session.state as string) === "unusable") ctx.retire(session.unusableReason);
        throw retryable("DEVICE_UNUSABLE", `device ${ctx.serial}: ${coerceError(e).message}`);
      } finally {
        ctx.drainSignal.removeEventListener("abort", onAbort);
        bullSignal?.removeEventListener("abort", onAbort);
      }
      if ((session.state as string) === "needs_recovery") {
        // With attempts left the job goes back to BullMQ at once (to another device) while this device
        // recovers, paused. The last attempt waits for recovery and keeps the truncated episode as data.
        if (attemptsLeft) ctx.recoverInBackground(() => session.recover());
        else await session.recover();
      }
      // Recovery (a relaunch before the episode, or ours above on the last attempt) may have spent the budget.
      if ((session.state as string) === "unusable") ctx.retire(session.unusableReason);
      log.info({ event: "episode:end", episodeId, outcome: traj.outcome, cause: traj.cause, steps: traj.steps.length, reward: traj.totalReward }, "episode ended");

      if (traj.cause === "cancelled") {
        if (ctx.drainSignal.aborted && token) {
          // Hand the job back without using an attempt; another worker (or this one, restarted) runs it.
          await job.moveToDelayed(Date.now(), token);
          log.info({ event: "job:handed-back", episodeId }, "episode cancelled by drain; job handed back");
          throw new DelayedError();
        }
        throw retryable("CANCELLED", `job ${job.id}: episode cancelled`);
      }
      if ((DEVICE_TROUBLE.has(traj.cause) || traj.cause === "policy_failed") && attemptsLeft) {
        throw retryable(traj.cause === "policy_failed" ? "POLICY_FAILED" : "DEVICE_TROUBLE", `device ${ctx.serial}: ${traj.cause}: ${traj.causeDetail}`);
      }
      // The last attempt keeps even a device-trouble truncation: it is data, and the campaign gets its record.

      const frameEvery = data.options.frameEvery ?? session.config.frameEvery;
      const c = await ctx.store.commit(
        { ...traj, episodeId, campaignId: data.campaignId, episodeIndex: data.episodeIndex, attempt, worker: ctx.workerName, taskDialect: task.dialect, frameEvery },
        finalFile,
        frameEvery,
      );
      if (c.alreadyCommitted && c.existing) {
        log.info({ event: "episode:already-committed", episodeId, file: c.path }, "another attempt committed this episode first; its record stands");
        return fromStored(c.existing, c.path);
      }
      ctx.metrics.trajectoryWritten({ bytes: c.bytes, files: 1 });
      ctx.metrics.episodeFinished({
        taskId: task.task.id,
        outcome: traj.outcome,
        cause: traj.cause,
        durationSec: (traj.endedAt.getTime() - traj.startedAt.getTime()) / 1000,
        steps: traj.steps.length,
        reward: traj.totalReward,
      });
      log.info({ event: "episode:committed", episodeId, file: c.path, bytes: c.bytes }, "episode committed");
      return parseEpisodeJobResult(resultOf(traj, c.path, ctx.workerName, ctx.serial), job.id);
    } finally {
      ctx.setBusy(false);
      await policy.close().catch(() => undefined);
    }
  };
}
