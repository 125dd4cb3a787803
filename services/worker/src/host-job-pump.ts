/**
 * One BullMQ Worker per worker host, taking episode jobs for all of its devices: concurrency follows the
 * pool's capacity (devices that may take jobs), and each fetched job runs on an idle device of the pool.
 * So a host holds a fixed handful of Redis connections (the Worker's command and blocking connections),
 * however many devices it has — instead of two per device.
 *
 * Per device as before: a device in recovery pauses (leaves the pool until it recovers), a retried job
 * prefers another device, lockRenewalFailed cancels that job's episode, a drained device finishes or hands
 * back its job.
 */
import { DelayedError, type Job } from "bullmq";
import type { Logger } from "@farm/log";
import { bullConnection, EpisodeJobWorker, QUEUE_NAMES, type BullConnection, type EpisodeJobResult, type RedisHealth } from "@farm/queue";
import { DevicePool, PoolClosedError, type PoolMember } from "./device-pool.ts";
import { LOCK_LOST_REASON } from "./episode-processor.ts";


/** A device as the pump sees it: its serial and what it does with a job (the episode processor). */
export interface PumpMember extends PoolMember {
  process(job: Job, token: string | undefined, signal: AbortSignal | undefined): Promise<EpisodeJobResult>;
}

export interface HostJobPumpOptions {
  redisUrl: string;
  queuePrefix: string;
  workerName: string;
  lockDurationMs: number;
  stalledIntervalMs: number;
  redisHealth: RedisHealth;
  logger: Logger;
  /** A fetch found jobs waiting and took `jobs` more at once (farm_job_fetch_burst_jobs). */
  onFetchBurst?(jobs: number): void;
}

export class HostJobPump {
  readonly pool: DevicePool<PumpMember>;
  private readonly worker: EpisodeJobWorker<unknown, EpisodeJobResult>;
  private readonly connection: BullConnection;
  private running = false;
  private paused = false;
  private closing: Promise<void> | undefined;
  private readonly log: Logger;

  constructor(private readonly opts: HostJobPumpOptions) {
    this.log = opts.logger.child({ component: "job-pump" });
    this.pool = new DevicePool<PumpMember>({ onCapacity: (n) => this.setCapacity(n) });
    this.connection = bullConnection(opts.redisUrl, "blocking");
    // EpisodeJobWorker: a job whose stored payload is not JSON fails (JOB_PAYLOAD_INVALID) instead of stalling.
    this.worker = new EpisodeJobWorker<unknown, EpisodeJobResult>(QUEUE_NAMES.episodes, (job, token, signal) => this.runOnDevice(job, token, signal), {
      connection: this.connection.connection,
      prefix: opts.queuePrefix,
      name: opts.workerName,
      concurrency: 1,
      autorun: false,
      lockDuration: opts.lockDurationMs,
      stalledInterval: opts.stalledIntervalMs,
      // A host crash stalls every job it ran once, a Redis outage longer than the lock stalls them again;
      // allow a third before giving the job up (a job that crashes its worker every time still ends).
      maxStalledCount: 3,
    }, { onBurst: (n) => opts.onFetchBurst?.(n) });
    this.worker.on("error", (err) => {
      // "could not renew lock" is handled below; "Missing lock for job" is BullMQ refusing to finish an attempt
      // whose lock expired (a partition longer than the lock: the job ran elsewhere, the claim settled the
      // episode); connection errors are the outage RedisHealth logs once.
      if (!/could not renew lock|Missing lock for job/.test(err.message)) opts.redisHealth.noteError(err);
    });
    // Frozen or cut off past the lock duration: the job may already run elsewhere. Cancel our episode; the
    // claim (checked against the lock atomically) would refuse its commit anyway.
    this.worker.on("lockRenewalFailed", (jobIds) => {
      for (const id of jobIds) {
        this.log.warn({ event: "job:lock-renewal-failed", jobId: id }, "could not renew the job's lock; cancelling its episode");
        this.worker.cancelJob(id, LOCK_LOST_REASON);
      }
    });
    this.worker.on("failed", (job, err) => {
      if (job) this.log.warn({ event: "job:failed", jobId: job.id, attemptsMade: job.attemptsMade, reason: err.message }, "job attempt failed");
    });
  }

  /** The BullMQ Worker's concurrency: devices that may take jobs (0 → paused). */
  get concurrency(): number {
    return this.paused || !this.running ? 0 : this.worker.concurrency;
  }

  private setCapacity(n: number): void {
    if (this.closing) return;
    const grew = n > this.worker.concurrency;
    if (n > 0) this.worker.concurrency = n;
    // A device that became ready (bind, recovery, lease returned) takes a job now, not when one ends.
    if (grew && this.running && !this.paused) this.worker.wakeFetchLoop();
    if (n > 0 && !this.running) {
      this.running = true;
      this.worker.run().catch((e: unknown) => this.opts.redisHealth.noteError(e instanceof Error ? e : new Error(String(e))));
    } else if (n > 0 && this.paused) {
      this.paused = false;
      void this.worker.resume();
    } else if (n === 0 && this.running && !this.paused) {
      // No device may take a job: stop fetching (running jobs go on).
      this.paused = true;
      void this.worker.pause(true);
    }
  }

  /** Runs the job on an idle device; a job fetched when none is left (a device paused meanwhile) waits for one. */
  private async runOnDevice(job: Job, token: string | undefined, signal: AbortSignal | undefined): Promise<EpisodeJobResult> {
    let member: PumpMember;
    try {
      member = await this.pool.acquire(job.id, signal);
    } catch (e) {
      if (e instanceof PoolClosedError && token) {
        // Draining: hand the job back without using an attempt.
        await job.moveToDelayed(Date.now(), token);
        throw new DelayedError();
      }
      throw e;
    }
    try {
      return await member.process(job, token, signal);
    } catch (e) {
      if (!(e instanceof DelayedError)) this.pool.noteFailure(job.id, member.serial);
      throw e;
    } finally {
      this.pool.release(member);
    }
  }

  /** Stop taking new jobs at once; running ones go on (their devices drain them). */
  stopFetching(): void {
    this.pool.close();
    if (this.running && !this.paused) {
      this.paused = true;
      void this.worker.pause(true);
    }
  }

  /** Closes the Worker (waits for running jobs: drain the devices first) and its connections. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.stopFetching();
      try {
        await this.worker.close();
      } catch (e) {
        this.log.warn({ event: "worker:close-failed", err: String(e) }, "closing the BullMQ worker failed");
      }
      await this.connection.close();
    })();
    return this.closing;
  }
}
