/**
 * The worker service: follows the devices on its adb server (all, or a given list), binds a DeviceSlot
 * (session + one BullMQ worker, concurrency 1) to each device that is online, unbinds a device that goes
 * away and binds it again when it comes back; serves /metrics; drains on request.
 *
 *   const svc = await WorkerService.create(resolveWorkerConfig({ ... }));
 *   await svc.start();   // returns once discovery runs; devices bind in the background
 *   await svc.close();   // drain: finish or hand back running episodes, close everything
 */
import { AdbDriver, type DeviceChange } from "@farm/adb";
import { createLogger, type Logger } from "@farm/log";
import { createFarmMetrics, FARM_VERSION, startMetricsServer, type FarmMetrics, type MetricsServer } from "@farm/metrics";
import { checkRedisAccess, createRedisClient, RedisCommitArbiter, RedisHealth } from "@farm/queue";
import type { RedisClient as Redis } from "@farm/queue";
import { CampaignVersionCache } from "./campaign-versions.ts";
import type { EventHook } from "@farm/episode";
import { resolvePending, type CommitDeps } from "./commit-flow.ts";
import type { WorkerConfig } from "./config.ts";
import { DeviceSlot } from "./device-slot.ts";
import type { DeviceSource } from "./device-source.ts";
import { HostJobPump } from "./host-job-pump.ts";
import { EpisodeStore } from "./episode-store.ts";
import { faultHooksFrom, type FaultHooks } from "./fault-hooks.ts";
import { adbCallsToMetrics, episodeEventsToMetrics } from "./metrics-wiring.ts";
import { startLaunchedEmulators } from "./launched-emulators.ts";
import { DeviceTransports } from "./device-transports.ts";
import type { EmulatorSupervisor } from "@farm/emulator-launcher";
import { OperatorRelay } from "./operator-relay.ts";
import { hostPolicyTransport, type PolicyTransport } from "./policy-transport.ts";
import { DeviceHeartbeats } from "./device-heartbeat.ts";
import { deviceScreenRoute } from "./device-screen.ts";
import { advertisedUrl } from "./advertised-url.ts";
import { loadTaskCatalog, type TaskCatalog } from "./task-catalog.ts";
import { coerceError } from "@farm/errors";
import { hostDevicePool } from "./device-lease.ts";
import { startRemoteEnv, type RemoteEnvServer } from "./remote-env/index.ts";
import { startOpenEnv, type OpenEnvServer } from "./openenv/index.ts";
import { createDeviceTrees, type DeviceTrees } from "./a11y-trees.ts";

export interface WorkerServiceOptions {
  logger?: Logger;
  /** Share a metrics registry (e.g. the demo runs worker and scheduler in one process). Default: a new one. */
  metrics?: FarmMetrics;
  /** Do not start the /metrics server (the caller serves `metrics`). */
  noMetricsServer?: boolean;
  /** Devices from elsewhere than the adb server (the scale benchmark's FakeDevices). Default: the adb server. */
  deviceSource?: DeviceSource;
}

export class WorkerService {
  readonly metrics: FarmMetrics;
  private readonly slots = new Map<string, DeviceSlot>();
  /** Slots being stopped, so a device that comes back waits for its old slot to let go. */
  private readonly stopping = new Map<string, Promise<void>>();
  private readonly retryTimers = new Set<NodeJS.Timeout>();
  private readonly online = new Set<string>();
  private tracking: { close(): void } | undefined;
  /** The emulators this worker launched (config `launch`), if any. */
  private emulators: EmulatorSupervisor | undefined;
  private readonly transports: DeviceTransports;
  private metricsServer: MetricsServer | undefined;
  private closing: Promise<void> | undefined;
  private started = false;
  private resolveTimer: NodeJS.Timeout | undefined;
  private resolving: Promise<unknown> = Promise.resolve();
  readonly arbiter: RedisCommitArbiter;
  /** The campaigns' current policy versions, cached per campaign (campaign-versions.ts). */
  private readonly campaignVersions: CampaignVersionCache;
  readonly redisHealth: RedisHealth;
  private readonly commitDeps: CommitDeps;
  private readonly policyTransport: PolicyTransport;
  /** The host's relay of `human` episodes to the operators' browsers (operator-relay.ts). */
  private readonly operators: OperatorRelay;
  /** The host's one BullMQ Worker and its device pool (Redis connections per host, not per device). */
  readonly pump: HostJobPump;
  private remoteEnv: RemoteEnvServer | undefined;
  private openEnv: OpenEnvServer | undefined;
  /** Per-device heartbeats in Redis (the fleet page, `farm devices`). */
  readonly heartbeats: DeviceHeartbeats;
  /** Runner events → metrics and heartbeats. */
  private readonly fanOutEvents: EventHook;

  private constructor(
    readonly config: WorkerConfig,
    readonly catalog: TaskCatalog,
    private readonly driver: DeviceSource,
    readonly store: EpisodeStore,
    private readonly logger: Logger,
    metrics: FarmMetrics,
    private readonly serveMetrics: boolean,
    private readonly redis: Redis,
    private readonly faults: FaultHooks,
    /** The accessibility forwarder set-up (config `a11y.trees`); undefined: trees by uiautomator only. */
    private readonly trees: DeviceTrees | undefined,
  ) {
    this.metrics = metrics;
    metrics.setDeviceStateSource(() => this.deviceStateCounts());
    this.arbiter = new RedisCommitArbiter(redis, config.queuePrefix, { maxLen: config.streamMaxLen, maxAgeMs: config.streamMaxAgeSec * 1000 });
    this.campaignVersions = new CampaignVersionCache(redis, config.queuePrefix);
    this.redisHealth = new RedisHealth(logger, {
      onChange: (up, outageMs) => {
        metrics.setRedisUp(up);
        // The beats could not go out meanwhile: the first ones after say what happened to every device.
        if (up && outageMs !== undefined) this.heartbeats.cutOff(outageMs);
      },
    }).watch(redis);
    this.commitDeps = { store, arbiter: this.arbiter, metrics, logger, workerName: config.workerName };
    this.transports = new DeviceTransports(driver, metrics);
    this.operators = new OperatorRelay(redis, config.redisUrl, config.queuePrefix, driver, config.workerName, metrics, logger.child({ component: "operator-relay" }), config.operatorRelay);
    this.policyTransport = { ...hostPolicyTransport(config, metrics, logger), operators: this.operators };
    this.pump = new HostJobPump({ redisUrl: config.redisUrl, queuePrefix: config.queuePrefix, workerName: config.workerName, lockDurationMs: config.lockDurationMs, stalledIntervalMs: config.stalledIntervalMs, redisHealth: this.redisHealth, logger, onFetchBurst: (n) => metrics.jobFetchBurst(n) });
    this.heartbeats = new DeviceHeartbeats({
      redis,
      prefix: config.queuePrefix,
      worker: config.workerName,
      logger,
      transportOf: (serial) => this.transports.transportOf(serial),
      baseUrl: () => advertisedUrl(config.advertiseUrl, this.metricsServer?.url, config.metricsHost),
      redisUp: () => this.redisHealth.up,
      intervalMs: config.heartbeatMs,
    });
    const toMetrics = episodeEventsToMetrics(metrics);
    this.fanOutEvents = (e) => {
      toMetrics(e);
      this.heartbeats.onEvent(e);
    };
  }

  /** Loads tasks and prepares everything; throws on a bad config or when no task loads. */
  static async create(config: WorkerConfig, opts: WorkerServiceOptions = {}): Promise<WorkerService> {
    const logger = opts.logger ?? createLogger({ service: "worker", level: config.logLevel });
    const metrics =
      opts.metrics ??
      createFarmMetrics({
        service: "worker",
        onLabelOverflow: (o) => logger.warn({ event: "metrics:label_overflow", ...o }, "metric label value mapped to other"),
        onCollectError: (o) => logger.warn({ event: "metrics:collect_error", source: o.source, err: o.error.message }, "metric collection failed"),
      });
    const catalog = loadTaskCatalog(config.taskPaths, config.apkDirs, logger);
    // Trees from AndroidEnv's accessibility forwarder (`--trees`): one hub for the host, given to the driver.
    const trees = opts.deviceSource
      ? undefined
      : createDeviceTrees(config.a11y, { logger: logger.child({ component: "a11y" }), onRefused: (reason) => metrics.a11yForwarderRefused(reason), onFallback: (reason) => metrics.a11yForwarderFallback(reason) });
    const driver =
      opts.deviceSource ??
      new AdbDriver({ host: config.adbHost, port: config.adbPort, adbBin: config.adbBin, logger, events: { onCall: adbCallsToMetrics(metrics), onScreenTree: (t) => metrics.screenTreeRead(t.source, t.outcome) }, grpc: config.grpc, ...(trees ? { a11y: { forwarder: trees } } : {}) });
    const store = new EpisodeStore(config.outDir, config.codec);
    const faults = faultHooksFrom(config.faultInject);
    if (faults.armed.length > 0) logger.warn({ event: "worker:faults-armed", faults: faults.armed }, "FAULT INJECTION ENABLED (FARM_FAULT_INJECT): this process will crash on purpose");
    // One command connection for claims; fail now, clearly, on bad credentials or ACLs (never retry those forever).
    const redis = createRedisClient(config.redisUrl);
    try {
      await checkRedisAccess(redis, config.redisUrl, config.queuePrefix);
    } catch (e) {
      redis.disconnect();
      await driver.close();
      await trees?.close();
      throw e;
    }
    return new WorkerService(config, catalog, driver, store, logger, metrics, !opts.noMetricsServer, redis, faults, trees);
  }

  /** Where /metrics is served, once started (undefined when not served). */
  get metricsUrl(): string | undefined {
    return this.metricsServer?.url;
  }

  /** host:port of the dm_env_rpc server, once started (undefined when off). */
  get envAddress(): string | undefined {
    return this.remoteEnv?.address;
  }

  /** Base URL of the OpenEnv server (http://host:port), once started (undefined when off). */
  get openEnvUrl(): string | undefined {
    return this.openEnv?.url;
  }

  /** OpenEnv sessions and the device each holds. */
  openEnvSessions(): Record<string, string> {
    return this.openEnv?.sessionDevices() ?? {};
  }

  /** Remote worlds and the device each holds. */
  remoteWorlds(): Record<string, string | null> {
    return this.remoteEnv?.worldDevices() ?? {};
  }

  /** Serials with a slot, and each slot's state. */
  deviceStates(): Record<string, string> {
    return Object.fromEntries([...this.slots].map(([s, slot]) => [s, slot.state]));
  }

  async start(): Promise<void> {
    if (this.started) throw new Error("WorkerService already started");
    this.started = true;
    if (this.serveMetrics) {
      this.metricsServer = await startMetricsServer({
        port: this.config.metricsPort,
        host: this.config.metricsHost,
        metrics: this.metrics,
        healthy: () => !this.closing,
        extraRoute: deviceScreenRoute(this.driver, (serial) => this.slots.get(serial)?.state === "ready" || this.slots.get(serial)?.state === "busy"),
      });
    }
    this.logger.info(
      { event: "worker:start", adb: `${this.config.adbHost}:${this.config.adbPort}`, devices: this.config.devices ?? "all", tasks: [...this.catalog.byId.keys()], out: this.config.outDir, metrics: this.metricsUrl },
      "worker started",
    );
    if (this.trees) this.logger.info({ event: "worker:trees", trees: this.config.a11y.trees, forwarderApk: this.config.a11y.forwarderApk }, "screen trees from the accessibility forwarder where it can be had, else uiautomator");
    const swept = await this.store.sweepAbandonedTempFiles(10 * 60_000);
    if (swept > 0) this.logger.warn({ event: "worker:temp-files-swept", files: swept }, "removed temporary episode files abandoned by crashed workers");
    await this.resolvePendingFiles();
    this.resolveTimer = setInterval(() => void this.resolvePendingFiles(), this.config.resolveIntervalMs);
    this.resolveTimer.unref();
    this.emulators = startLaunchedEmulators(this.config, this.metrics, this.logger, (serial) => this.onLaunchedBooted(serial));
    this.tracking = this.driver.trackDevices((ev) => this.onDevice(ev));
    this.heartbeats.start();
    if (this.config.remoteEnv) {
      const pool = hostDevicePool(this.pump.pool, (serial) => this.slots.get(serial));
      this.remoteEnv = await startRemoteEnv(this.config.remoteEnv, { pool, catalog: this.catalog, commit: this.commitDeps, episode: this.config.episode, logger: this.logger });
    }
    if (this.config.openEnv) {
      const pool = hostDevicePool(this.pump.pool, (serial) => this.slots.get(serial));
      const c = this.config;
      this.openEnv = await startOpenEnv(c.openEnv!, { pool, catalog: this.catalog, commit: this.commitDeps, episode: c.episode, metrics: this.metrics, logger: this.logger, taskServerAllowedHosts: c.taskServerAllowedHosts, version: FARM_VERSION });
    }
  }

  /** Settles files left pending (a crash between publish and claim, a lost lock) once their episode has a claim. */
  resolvePendingFiles(): Promise<unknown> {
    this.resolving = this.resolving.then(async () => {
      if (!this.redisHealth.up) return;
      try {
        const r = await resolvePending(this.commitDeps);
        if (r.quarantined > 0 || r.settled > 0) this.logger.info({ event: "commit:pending-resolved", ...r }, "pending episode files settled against their claims");
      } catch (e) {
        this.logger.warn({ event: "commit:resolve-failed", err: coerceError(e).message }, "settling pending episode files failed (tried again later)");
      }
    });
    return this.resolving;
  }

  private wanted(serial: string): boolean {
    return !this.config.devices || this.config.devices.includes(serial);
  }

  /** A launched emulator booted: read the discovery files afresh (its gRPC endpoint) and bind it if adb lists it. */
  private onLaunchedBooted(serial: string): void {
    // An AdbDriver caches discovery reads briefly; other device sources have no gRPC endpoints to refresh.
    (this.driver as { grpc?: { refresh(): void } }).grpc?.refresh();
    if (!this.closing && this.online.has(serial) && this.wanted(serial)) void this.bind(serial);
  }

  /** A launched emulator still booting is bound once booted (onLaunchedBooted), so its gRPC endpoint is known. */
  private launchedBooting(serial: string): boolean {
    const state = this.emulators?.states()[serial];
    return state !== undefined && state !== "running";
  }

  private onDevice(ev: DeviceChange): void {
    if (this.closing || !this.wanted(ev.serial)) return;
    if (ev.kind !== "remove" && ev.state === "device") {
      this.online.add(ev.serial);
      if (!this.launchedBooting(ev.serial)) void this.bind(ev.serial);
    } else {
      this.online.delete(ev.serial);
      this.trees?.forget(ev.serial);
      const slot = this.slots.get(ev.serial);
      if (slot) {
        this.logger.warn({ event: "device:lost", serial: ev.serial, state: ev.state }, "device went away; it stops taking jobs");
        void this.unbind(slot, `device ${ev.state}`);
      }
    }
  }

  private async bind(serial: string): Promise<void> {
    if (this.slots.has(serial)) return;
    const slot = new DeviceSlot(serial, {
      config: this.config,
      driver: this.driver,
      catalog: this.catalog,
      store: this.store,
      arbiter: this.arbiter,
      pump: this.pump,
      faults: this.faults,
      redisHealth: this.redisHealth,
      metrics: this.metrics,
      logger: this.logger,
      onEvent: this.fanOutEvents,
      policyTransport: this.policyTransport,
      campaignVersions: this.campaignVersions,
      onState: (s) => this.onSlotState(s),
      onJob: (s, job) => (job.active ? this.heartbeats.jobActive(s.serial, job.data) : this.heartbeats.jobEnded(s.serial, job.failedReason)),
    });
    this.slots.set(serial, slot);
    this.heartbeats.slotState(serial, slot.state);
    await this.stopping.get(serial);
    if (this.slots.get(serial) !== slot) return;
    // The forwarder before the first episode (never throws: a device without one reads trees by uiautomator).
    if (this.trees) {
      await this.trees.prepare(this.driver.device(serial));
      if (this.slots.get(serial) !== slot || this.closing) return;
    }
    try {
      await slot.start();
    } catch (e) {
      this.logger.error({ event: "device:bind-failed", serial, err: coerceError(e).message }, "binding the device failed");
      await this.unbind(slot, "bind failed");
    }
  }

  private unbind(slot: DeviceSlot, reason: string): Promise<void> {
    if (this.slots.get(slot.serial) === slot) {
      this.slots.delete(slot.serial);
      this.transports.unbound(slot.serial);
    }
    const p = slot.close(reason).finally(() => {
      if (this.stopping.get(slot.serial) === p) this.stopping.delete(slot.serial);
    });
    this.stopping.set(slot.serial, p);
    return p;
  }

  private onSlotState(slot: DeviceSlot): void {
    if ((slot.state === "ready" || slot.state === "busy") && this.slots.get(slot.serial) === slot) this.transports.bound(slot.serial);
    this.heartbeats.slotState(slot.serial, slot.state);
    if (slot.state !== "unusable" || this.closing) return;
    // Give an unusable device another chance later (if it is still listed); one that goes away and
    // comes back is bound again by the tracker anyway.
    void this.unbind(slot, `unusable: ${slot.unusableReason}`);
    if (this.config.unusableRetryMs > 0) {
      const t = setTimeout(() => {
        this.retryTimers.delete(t);
        if (!this.closing && this.online.has(slot.serial)) void this.bind(slot.serial);
      }, this.config.unusableRetryMs);
      t.unref();
      this.retryTimers.add(t);
    }
  }

  /** Devices by state (unbound: listed by adb, not bound), for the device gauge at each scrape. */
  private deviceStateCounts(): Record<string, number> {
    const counts = new Map<string, number>();
    for (const slot of this.slots.values()) counts.set(slot.state, (counts.get(slot.state) ?? 0) + 1);
    for (const serial of this.online) if (!this.slots.has(serial)) counts.set("unbound", (counts.get("unbound") ?? 0) + 1);
    return Object.fromEntries(counts);
  }

  /** Drain and close: no new jobs; running episodes finish within drainTimeoutMs or are handed back. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.logger.info({ event: "worker:drain", devices: this.slots.size, graceMs: this.config.drainTimeoutMs }, "draining");
      for (const t of this.retryTimers) clearTimeout(t);
      this.retryTimers.clear();
      this.tracking?.close();
      this.pump.stopFetching();
      await this.remoteEnv?.close();
      await this.openEnv?.close();
      await Promise.all([...this.slots.values()].map((s) => this.unbind(s, "worker draining")));
      await Promise.all([...this.stopping.values()]);
      await this.pump.close();
      // Emulators we launched go down only after their episodes finished or were handed back.
      await this.emulators?.close();
      if (this.resolveTimer) clearInterval(this.resolveTimer);
      await this.resolvePendingFiles();
      await this.store.close();
      this.policyTransport.batcher.close();
      await this.operators.close();
      await this.heartbeats.close();
      this.redisHealth.close();
      await this.redis.quit().catch(() => this.redis.disconnect());
      await this.driver.close();
      await this.trees?.close();
      await this.metricsServer?.close();
      this.logger.info({ event: "worker:closed" }, "worker closed");
    })();
    return this.closing;
  }

  /** Same as close(): stop taking jobs, finish or hand back the running ones. */
  drain(): Promise<void> {
    return this.close();
  }
}
