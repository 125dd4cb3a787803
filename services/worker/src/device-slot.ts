/**
 * One device of this worker: its bound session and one BullMQ Worker (concurrency 1) taking episode jobs
 * for it. States: binding → ready ⇄ busy ⇄ recovering (paused) → (unusable | closed).
 */
import type { Worker } from "bullmq";
import type { AdbDriver } from "@farm/adb";
import type { EventHook } from "@farm/episode";
import type { Logger } from "@farm/log";
import type { FarmMetrics } from "@farm/metrics";
import { EpisodeJobWorker, QUEUE_NAMES, redisConnection, type CommitArbiter, type EpisodeJobResult, type RedisHealth } from "@farm/queue";
import type { WorkerConfig } from "./config.ts";
import { DeviceSessionCache } from "./device-session-cache.ts";
import { createEpisodeProcessor, LOCK_LOST_REASON } from "./episode-processor.ts";
import type { EpisodeStore } from "./episode-store.ts";
import type { FaultHooks } from "./fault-hooks.ts";
import type { TaskCatalog } from "./task-catalog.ts";
import { coerceError } from "@farm/errors";

export type SlotState = "binding" | "ready" | "busy" | "recovering" | "unusable" | "closed";

export interface SlotDeps {
  config: WorkerConfig;
  driver: AdbDriver;
  catalog: TaskCatalog;
  store: EpisodeStore;
  arbiter: CommitArbiter;
  faults: FaultHooks;
  /** The process's Redis connection state: BullMQ's connection errors go there (logged once per outage). */
  redisHealth: RedisHealth;
  metrics: FarmMetrics;
  logger: Logger;
  onEvent: EventHook;
  /** Told about every state change (device gauge, unusable → retry later). */
  onState(slot: DeviceSlot): void;
  /** Told when the slot takes a job (`active`, its stored data) and when an attempt ends (heartbeats). */
  onJob?(slot: DeviceSlot, job: { active: true; data: unknown } | { active: false; failedReason?: string }): void;
}

export class DeviceSlot {
  private _state: SlotState = "binding";
  private worker: Worker<unknown, EpisodeJobResult> | undefined;
  private readonly sessions: DeviceSessionCache;
  private readonly drain = new AbortController();
  private readonly log: Logger;
  private stopping: Promise<void> | undefined;
  /** Recovery running after the processor gave its job back; the session is not ours to close until it ends. */
  private recovering: Promise<void> | undefined;
  private _unusableReason = "";

  constructor(
    readonly serial: string,
    private readonly deps: SlotDeps,
  ) {
    this.log = deps.logger.child({ component: "device", serial });
    const episodeConfig = { ...deps.config.episode, apkDirs: [...(deps.config.episode.apkDirs ?? []), ...deps.catalog.apkDirs] };
    this.sessions = new DeviceSessionCache(deps.driver.device(serial), episodeConfig, deps.logger, deps.onEvent, (taskId) => deps.metrics.declareTask(taskId));
  }

  get state(): SlotState {
    return this._state;
  }

  get unusableReason(): string {
    return this._unusableReason;
  }

  private setState(s: SlotState): void {
    if (this._state === s || this._state === "closed") return;
    this._state = s;
    this.deps.onState(this);
  }

  /**
   * Binds the device (setup steps, when the worker has exactly one task, so the first job does not pay
   * for it) and starts taking jobs.
   */
  async start(): Promise<void> {
    const { config, catalog } = this.deps;
    if (catalog.byId.size === 1) {
      const only = [...catalog.byId.values()][0]!;
      try {
        const s = await this.sessions.sessionFor(only);
        if (s.state !== "ready") {
          this.retire(s.state === "unusable" ? s.unusableReason : `session ${s.state}`);
          return;
        }
      } catch (e) {
        // A task that cannot run is refused per job (with its reason); the device is fine.
        this.log.warn({ event: "device:warmup-failed", err: coerceError(e).message }, "binding at start failed; binding per job");
      }
    }
    if (this.stopping) return;
    const processor = createEpisodeProcessor({
      serial: this.serial,
      workerName: config.workerName,
      tasksById: catalog.byId,
      policyDir: config.policyDir,
      policyAllowedHosts: config.policyAllowedHosts,
      store: this.deps.store,
      arbiter: this.deps.arbiter,
      faults: this.deps.faults,
      metrics: this.deps.metrics,
      logger: this.deps.logger,
      sessionFor: (task) => this.sessions.sessionFor(task),
      drainSignal: this.drain.signal,
      retire: (reason) => this.retire(reason),
      recoverInBackground: (recover) => this.recoverInBackground(recover),
      setBusy: (busy) => {
        if (busy || this._state === "busy") this.setState(busy ? "busy" : "ready");
      },
    });
    // EpisodeJobWorker: a job whose stored payload is not JSON fails (JOB_PAYLOAD_INVALID) instead of stalling.
    const worker = new EpisodeJobWorker<unknown, EpisodeJobResult>(QUEUE_NAMES.episodes, processor, {
      connection: redisConnection(config.redisUrl, "blocking"),
      prefix: config.queuePrefix,
      name: `${config.workerName}/${this.serial}`,
      concurrency: 1,
      autorun: true,
      lockDuration: config.lockDurationMs,
      stalledInterval: config.stalledIntervalMs,
      // A host crash stalls every job it ran once, a Redis outage longer than the lock stalls them again;
      // allow a third before giving the job up (a job that crashes its worker every time still ends).
      maxStalledCount: 3,
    });
    worker.on("error", (err) => {
      // "could not renew lock" is handled below; connection errors are the outage RedisHealth logs once.
      if (!/could not renew lock/.test(err.message)) this.deps.redisHealth.noteError(err);
    });
    // Frozen or cut off past the lock duration: the job may already run elsewhere. Cancel our episode; the
    // claim (checked against the lock atomically) would refuse its commit anyway.
    worker.on("lockRenewalFailed", (jobIds) => {
      for (const id of jobIds) {
        this.log.warn({ event: "job:lock-renewal-failed", jobId: id }, "could not renew the job's lock; cancelling its episode");
        worker.cancelJob(id, LOCK_LOST_REASON);
      }
    });
    worker.on("active", (job) => this.deps.onJob?.(this, { active: true, data: job.data }));
    worker.on("completed", () => this.deps.onJob?.(this, { active: false }));
    worker.on("failed", (job, err) => {
      this.deps.onJob?.(this, { active: false, failedReason: err.message });
      if (job) this.log.warn({ event: "job:failed", jobId: job.id, attemptsMade: job.attemptsMade, reason: err.message }, "job attempt failed");
    });
    this.worker = worker;
    this.setState("ready");
    this.log.info({ event: "device:bound", workerName: worker.opts.name }, "device bound; taking jobs");
  }

  private recoverInBackground(recover: () => Promise<unknown>): void {
    const w = this.worker;
    this.setState("recovering");
    // Called from inside the processor: do not wait for the active job (it is this one).
    void w?.pause(true);
    this.log.warn({ event: "device:recovering" }, "device in recovery; its job goes back to the queue");
    // Recovery starts on the next turn of the event loop, once the processor has given its job back.
    const started = new Promise<void>((r) => setImmediate(r)).then(recover);
    this.recovering = started.then(
      () => undefined,
      () => undefined,
    ).then(() => {
      this.recovering = undefined;
      if (this._state !== "recovering" || this.stopping) return; // being stopped, or retired meanwhile
      const s = this.sessions.current;
      if (s?.state === "ready") {
        this.log.info({ event: "device:recovered" }, "device recovered; taking jobs again");
        this.setState("ready");
        void w?.resume();
      } else this.retire(s?.state === "unusable" ? s.unusableReason : `recovery ended in state ${s?.state ?? "none"}`);
    });
  }

  /** The device cannot run episodes: stop taking jobs (without waiting for the running one). */
  retire(reason: string): void {
    if (this._state === "unusable" || this._state === "closed") return;
    this._unusableReason = reason;
    this.log.error({ event: "device:unusable", reason }, "device unusable; it stops taking jobs");
    this.setState("unusable");
    void this.closeWorker(false);
  }

  private async closeWorker(abortAfterGrace: boolean): Promise<void> {
    const w = this.worker;
    if (!w) return;
    let timer: NodeJS.Timeout | undefined;
    if (abortAfterGrace) {
      timer = setTimeout(() => {
        this.log.warn({ event: "device:drain-timeout", graceMs: this.deps.config.drainTimeoutMs }, "episode still running at the end of the grace period; cancelling it");
        this.drain.abort();
      }, this.deps.config.drainTimeoutMs);
    }
    try {
      // close() stops fetching at once and waits for the running job (finished or handed back).
      await w.close();
    } catch (e) {
      this.log.warn({ event: "worker:close-failed", err: String(e) }, "closing the BullMQ worker failed");
    } finally {
      if (timer) clearTimeout(timer);
    }
  }

  /**
   * Stops taking jobs, lets the running episode finish within the drain grace period (then cancels it and
   * hands the job back), and closes the session. Idempotent.
   */
  stop(reason: string): Promise<void> {
    this.stopping ??= (async () => {
      this.log.info({ event: "device:unbinding", reason }, "device stops taking jobs");
      await this.closeWorker(true);
      // Closing a session mid-recovery would let recovery reopen its streams afterwards: wait for it.
      await this.recovering;
      await this.sessions.close();
      this.setState("closed");
    })();
    return this.stopping;
  }
}
