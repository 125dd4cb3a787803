/**
 * One device of this worker: its bound session, a member of the host's device pool (the host's one
 * BullMQ Worker hands it episode jobs, host-job-pump.ts). States: binding → ready ⇄ busy ⇄ recovering (paused) → (unusable | closed).
 */
import type { CampaignVersionCache } from "./campaign-versions.ts";
import type { PolicyTransport } from "./policy-transport.ts";
import type { DeviceSource } from "./device-source.ts";
import type { EventHook } from "@farm/episode";
import type { Logger } from "@farm/log";
import type { FarmMetrics } from "@farm/metrics";
import type { CommitArbiter, RedisHealth } from "@farm/queue";
import type { WorkerConfig } from "./config.ts";
import { DeviceSessionCache } from "./device-session-cache.ts";
import { createEpisodeProcessor } from "./episode-processor.ts";
import type { HostJobPump, PumpMember } from "./host-job-pump.ts";
import type { EpisodeStore } from "./episode-store.ts";
import type { FaultHooks } from "./fault-hooks.ts";
import type { TaskCatalog } from "./task-catalog.ts";
import { coerceError } from "@farm/errors";
import type { SlotLeaseHooks } from "./device-lease.ts";

export type SlotState = "binding" | "ready" | "busy" | "recovering" | "leased" | "unusable" | "closed";

export interface SlotDeps {
  config: WorkerConfig;
  driver: DeviceSource;
  catalog: TaskCatalog;
  store: EpisodeStore;
  arbiter: CommitArbiter;
  faults: FaultHooks;
  /** The host's job pump: its device pool is where this device takes jobs. */
  pump: HostJobPump;
  /** The process's Redis connection state: BullMQ's connection errors go there (logged once per outage). */
  redisHealth: RedisHealth;
  metrics: FarmMetrics;
  logger: Logger;
  onEvent: EventHook;
  /** The host's remote-policy batcher and exchange metrics. */
  policyTransport?: PolicyTransport;
  /** The campaigns' current policy versions (staleness, issue 38). */
  campaignVersions?: CampaignVersionCache;
  /** Told about every state change (device gauge, unusable → retry later). */
  onState(slot: DeviceSlot): void;
  /** Told when the slot takes a job (`active`, its stored data) and when an attempt ends (heartbeats). */
  onJob?(slot: DeviceSlot, job: { active: true; data: unknown } | { active: false; failedReason?: string }): void;
}

export class DeviceSlot {
  private _state: SlotState = "binding";
  private member: PumpMember | undefined;
  private readonly sessions: DeviceSessionCache;
  private readonly drain = new AbortController();
  private readonly log: Logger;
  private stopping: Promise<void> | undefined;
  /** Recovery running after the processor gave its job back; the session is not ours to close until it ends. */
  private recovering: Promise<void> | undefined;
  private _unusableReason = "";
  /** Taken out of the job pool by a remote world (device-lease.ts). */
  private leased = false;

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
      taskServerAllowedHosts: config.taskServerAllowedHosts,
      policyTransport: this.deps.policyTransport,
      ...(this.deps.campaignVersions ? { campaignVersions: this.deps.campaignVersions } : {}),
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
    // The host's one BullMQ Worker hands this device jobs through the pool (host-job-pump.ts); the heartbeats
    // hear when an attempt starts and ends here.
    const member: PumpMember = {
      serial: this.serial,
      process: async (job, token, signal) => {
        this.deps.onJob?.(this, { active: true, data: job.data });
        try {
          const result = await processor(job, token, signal);
          this.deps.onJob?.(this, { active: false });
          return result;
        } catch (e) {
          this.deps.onJob?.(this, { active: false, failedReason: coerceError(e).message });
          throw e;
        }
      },
    };
    this.member = member;
    this.deps.pump.pool.add(member);
    this.setState("ready");
    this.log.info({ event: "device:bound", workerName: config.workerName }, "device bound; taking jobs");
  }

  /**
   * Hook for device-lease.ts: the host's pool has leased this (idle) device out (`poolLease`), so it takes
   * no job until `release()`. Undefined when the slot itself is not ready (the caller gives the lease back).
   */
  leaseHooks(poolLease: { release(): void }): SlotLeaseHooks | undefined {
    if (this._state !== "ready" || this.leased || this.stopping) return undefined;
    this.leased = true;
    this.setState("leased");
    return {
      paused: Promise.resolve(), // the pool leases idle devices only: no campaign job runs on it
      sessionFor: (task) => this.sessions.sessionFor(task),
      release: async () => {
        this.leased = false;
        const s = this.sessions.current;
        // Retire first: a device given back to the pool could take a job in the same turn.
        if (s?.state === "unusable") this.retire(s.unusableReason);
        else if (this._state === "leased") this.setState("ready");
        poolLease.release();
      },
    };
  }

  private recoverInBackground(recover: () => Promise<unknown>): void {
    const pool = this.deps.pump.pool;
    this.setState("recovering");
    // Called from inside the processor: the device leaves the pool once this job is given back.
    pool.pause(this.serial);
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
        pool.resume(this.serial);
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
    if (!this.member) return;
    let timer: NodeJS.Timeout | undefined;
    if (abortAfterGrace) {
      timer = setTimeout(() => {
        this.log.warn({ event: "device:drain-timeout", graceMs: this.deps.config.drainTimeoutMs }, "episode still running at the end of the grace period; cancelling it");
        this.drain.abort();
      }, this.deps.config.drainTimeoutMs);
    }
    try {
      // Leaves the pool at once and waits for the running job (finished or handed back).
      await this.deps.pump.pool.remove(this.serial);
    } finally {
      if (timer) clearTimeout(timer);
    }
  }

  /**
   * Stops taking jobs, lets the running episode finish within the drain grace period (then cancels it and
   * hands the job back), and closes the session. Idempotent.
   */
  close(reason: string): Promise<void> {
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
