/**
 * Every farm metric, in one object that owns its Registry. Create it once per process
 * (`createFarmMetrics`) and pass it to whatever records; serve it with `startMetricsServer`.
 *
 * Rules kept here so callers cannot break them:
 *   - names: `farm_` prefix, base units as suffix (`_seconds`, `_bytes`), counters end in `_total`;
 *   - labels: bounded — closed sets map unknown values to "other", open sets (task, adb op, queue,
 *     device state, recovery cause) keep the first N well-formed values, then "other"; never an
 *     episode id, job id, seed or serial (no method takes one);
 *   - parameters are typed with the owning libraries' unions; values that still arrive outside them
 *     at run time (from JSON, older workers) are guarded as above;
 *   - bad numbers (NaN, negative durations) are dropped and counted, never thrown.
 */
import type { StepStatus } from "@farm/adb";
import type { EndCause, EpisodeOutcome } from "@farm/episode";
import type { PolicyErrorCode } from "@farm/policy";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import {
  ADB_CALL_BUCKETS_SEC,
  EPISODE_DURATION_BUCKETS_SEC,
  EPISODE_STEPS_BUCKETS,
  JOB_START_LATENCY_BUCKETS_SEC,
  POLICY_LATENCY_BUCKETS_SEC,
  REWARD_BUCKETS,
  STEP_PHASE_BUCKETS_SEC,
} from "./buckets.ts";
import { boundCounterPerLabels, boundHistogramPerLabel } from "./bound-metrics.ts";
import { cappedLabel, closedLabel, type OverflowReporter } from "./bounded-label.ts";
import { FARM_VERSION } from "./version.ts";
import { METRIC } from "./names.ts";
import { collectQueueDepth, type QueueDepthSource } from "./queue-depth.ts";
import { RELAUNCH_CAUSES, RESET_KINDS, RESET_MODES, TRANSPORTS, type RelaunchCause, type ResetKindLabel, type ResetModeLabel, type Transport } from "./vocabulary.ts";
import { ADB_STATUSES, COMMIT_RESULTS, RETRY_CAUSES, type CommitResult, DECLARED_EPISODE_ENDS, END_CAUSES, OUTCOMES, POLICY_ERROR_CODES, QUEUE_STATES, STEP_PHASES, UI_ACTION_OPS, SCREEN_TREE_SOURCES, SCREEN_TREE_OUTCOMES, type StepPhase } from "./vocabulary.ts";

export interface FarmMetricsOptions {
  /** Set as the `service` label on every series (e.g. "worker", "scheduler"). */
  service: string;
  /** The `version` label of farm_build_info. Default: the version in the repository's package.json. */
  version?: string;
  /** More constant labels on every series (e.g. `{ host: "farm-3" }`); keep them constant per process. */
  defaultLabels?: Record<string, string>;
  /** Node.js process metrics (process_*, nodejs_*). Default true. */
  collectDefault?: boolean;
  /** Distinct task ids kept as label values before "other". Default 200. */
  maxTasks?: number;
  /** Reward histogram buckets (rewards are task-specific). Default REWARD_BUCKETS. */
  rewardBuckets?: number[];
  /** How long a scrape waits for the queue-depth source. Default 2000 ms. */
  queueDepthTimeoutMs?: number;
  /**
   * Told about the first out-of-bounds value of each (metric, label) pair, so the caller can log it
   * once; later ones are only counted in farm_metric_label_overflow_total.
   */
  onLabelOverflow?: (info: { metric: string; label: string; value: string }) => void;
  /** Told about every failed scrape-time collection (e.g. Redis down while reading queue depth), to log it. */
  onCollectError?: (info: { source: string; error: Error }) => void;
}

export const POLICY_MODES = ["single", "batched"] as const;
export type PolicyMode = (typeof POLICY_MODES)[number];
/** Why a remote policy's answer body was kept out of job data (@farm/policy's ForeignBody kind). */
export const FOREIGN_BODY_KINDS = ["http_status", "not_json", "not_an_answer"] as const;
export type ForeignBodyKind = (typeof FOREIGN_BODY_KINDS)[number];

export interface EpisodeFinished {
  taskId: string;
  outcome: EpisodeOutcome;
  cause: EndCause;
  durationSec: number;
  steps: number;
  reward: number;
  /** Who drove the episode: a campaign job, or a remote client over dm_env_rpc. @default "campaign" */
  origin?: EpisodeOrigin;
}

export type EpisodeOrigin = "campaign" | "remote";
const ORIGINS: readonly EpisodeOrigin[] = ["campaign", "remote"];

export interface AdbCall {
  /** The kind of call, snake_case and from a small set: "shell", "screenshot", "install", "start_activity", … */
  op: string;
  /** "ok" or the error kind ("adb_error", "timeout", …). */
  status: StepStatus;
  seconds: number;
}

export type FarmMetrics = ReturnType<typeof createFarmMetrics>;

// Ids we accept as label values: short, no spaces, no slashes (a path or a message is not an id).
const ID_PATTERN = /^[A-Za-z0-9_.:-]{1,100}$/;
const SNAKE_PATTERN = /^[a-z][a-z0-9_]{0,39}$/;

export function createFarmMetrics(opts: FarmMetricsOptions) {
  const registry = new Registry();
  registry.setDefaultLabels({ ...opts.defaultLabels, service: opts.service });
  if (opts.collectDefault ?? true) collectDefaultMetrics({ register: registry });
  const registers = [registry];

  // --- the metrics' own health -------------------------------------------------------------
  // Registered last (see the end), and they wait for this scrape's async collections, so a failure
  // or overflow found while collecting shows up in the same scrape rather than the next one.
  let scrapeCollection: Promise<void> = Promise.resolve();
  const afterScrapeCollection = () => scrapeCollection;
  const labelOverflow = new Counter({
    name: METRIC.labelOverflow,
    help: "Label values outside their bounded set, recorded as \"other\" instead",
    labelNames: ["metric", "label"] as const,
    registers: [],
    collect: afterScrapeCollection,
  });
  const invalidValues = new Counter({
    name: METRIC.invalidValues,
    help: "Observations dropped because the number was not finite or was negative where it cannot be",
    labelNames: ["metric"] as const,
    registers: [],
  });
  const collectErrors = new Counter({
    name: METRIC.collectErrors,
    help: "Scrape-time collections that failed or timed out (the gauge is empty for that scrape)",
    labelNames: ["source"] as const,
    registers: [],
    collect: afterScrapeCollection,
  });

  const reportedOverflows = new Set<string>();
  const report: OverflowReporter = (metric, label, value) => {
    labelOverflow.inc({ metric, label });
    const key = `${metric}\u0000${label}`;
    if (!reportedOverflows.has(key)) {
      reportedOverflows.add(key);
      opts.onLabelOverflow?.({ metric, label, value });
    }
  };
  const valid = (metric: string, n: number, allowNegative = false): boolean => {
    if (Number.isFinite(n) && (allowNegative || n >= 0)) return true;
    invalidValues.inc({ metric });
    return false;
  };

  // One guard per open label, shared by all metrics using it, so the cap is one set of values.
  const task = cappedLabel("task", { maxValues: opts.maxTasks ?? 200, pattern: ID_PATTERN }, report);
  const adbOp = cappedLabel("op", { maxValues: 40, pattern: SNAKE_PATTERN }, report);
  const deviceState = cappedLabel("state", { maxValues: 16, pattern: SNAKE_PATTERN }, report);
  const recoveryCause = cappedLabel("cause", { maxValues: 32, pattern: SNAKE_PATTERN }, report);
  const queueName = cappedLabel("queue", { maxValues: 16, pattern: ID_PATTERN }, report);

  // --- episodes ----------------------------------------------------------------------------
  const episodes = new Counter({
    name: METRIC.episodes,
    help: "Finished episodes by task, outcome (terminated|truncated) and end cause",
    labelNames: ["task", "outcome", "cause"] as const,
    registers,
  });
  const outcome = closedLabel(METRIC.episodes, "outcome", OUTCOMES, report);
  const cause = closedLabel(METRIC.episodes, "cause", END_CAUSES, report);
  const episodeOrigins = new Counter({
    name: METRIC.episodeOrigins,
    help: "Finished episodes by origin (campaign|remote: a dm_env_rpc client) and outcome",
    labelNames: ["origin", "outcome"] as const,
    registers,
  });
  for (const origin of ORIGINS) for (const o of OUTCOMES) episodeOrigins.inc({ origin, outcome: o }, 0);
  const episodeDuration = new Histogram({
    name: METRIC.episodeDuration,
    help: "Wall-clock duration of finished episodes, reset end to last step",
    labelNames: ["task", "outcome"] as const,
    buckets: EPISODE_DURATION_BUCKETS_SEC,
    registers,
  });
  const episodeSteps = new Histogram({
    name: METRIC.episodeSteps,
    help: "Steps per finished episode",
    labelNames: ["task"] as const,
    buckets: EPISODE_STEPS_BUCKETS,
    registers,
  });
  const steps = new Counter({
    name: METRIC.steps,
    help: "Environment steps of finished episodes",
    labelNames: ["task"] as const,
    registers,
  });
  const episodeReward = new Histogram({
    name: METRIC.episodeReward,
    help: "Total reward per finished episode",
    labelNames: ["task"] as const,
    buckets: opts.rewardBuckets ?? REWARD_BUCKETS,
    registers,
  });
  const extrasDropped = new Counter({
    name: METRIC.extrasDropped,
    help: "Extras dropped (not in extras_spec, over the buffer cap, or unparseable)",
    labelNames: ["task"] as const,
    registers,
  });
  const logLinesMalformed = new Counter({
    name: METRIC.logLinesMalformed,
    help: "Logcat lines that did not parse",
    registers,
  });

  // --- steps and devices -------------------------------------------------------------------
  const stepPhaseDuration = new Histogram({
    name: METRIC.stepPhaseDuration,
    help: "Duration of one phase of one step: policy, action, observation, log (waiting for logcat); a11y_read and a11y_derive (within observation: the device's tree, the farm's work on it); step (the whole step)",
    labelNames: ["phase"] as const,
    buckets: STEP_PHASE_BUCKETS_SEC,
    registers,
  });
  const phase = closedLabel(METRIC.stepPhaseDuration, "phase", STEP_PHASES, report);
  /** One bound observer per phase (the hot path: 3-4 observations per step). */
  const phaseObserver = boundHistogramPerLabel(stepPhaseDuration, "phase", STEP_PHASE_BUCKETS_SEC);
  const uiActions = new Counter({
    name: METRIC.uiActions,
    help: "Agent answers that were not AndroidEnv touches, by what they came to on the device (op) or invalid",
    labelNames: ["op"] as const,
    registers,
  });
  const uiOp = closedLabel(METRIC.uiActions, "op", UI_ACTION_OPS, report);
  for (const op of UI_ACTION_OPS) uiActions.inc({ op }, 0);
  const screenTreeReads = new Counter({
    name: METRIC.screenTreeReads,
    help: "Reads of the screen as an accessibility tree, by source (uiautomator dump, AndroidEnv's forwarder) and outcome",
    labelNames: ["source", "outcome"] as const,
    registers,
  });
  const treeSource = closedLabel(METRIC.screenTreeReads, "source", SCREEN_TREE_SOURCES, report);
  const treeOutcome = closedLabel(METRIC.screenTreeReads, "outcome", SCREEN_TREE_OUTCOMES, report);
  const policyErrors = new Counter({
    name: METRIC.policyErrors,
    help: "Policy failures by PolicyError code",
    labelNames: ["code"] as const,
    registers,
  });
  const policyCode = closedLabel(METRIC.policyErrors, "code", POLICY_ERROR_CODES, report);
  const policyRequests = new Counter({
    name: METRIC.policyRequests,
    help: "HTTP requests to remote policies: mode single (one device's step) or batched (one per batch), result ok or error",
    labelNames: ["mode", "result"] as const,
    registers,
  });
  const policyBatchSize = new Histogram({
    name: METRIC.policyBatchSize,
    help: "Messages (device steps and episode ends) per batched remote-policy request",
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
    registers,
  });
  for (const mode of POLICY_MODES) for (const result of ["ok", "error"]) policyRequests.inc({ mode, result }, 0);
  const policyForeignBodies = new Counter({
    name: METRIC.policyForeignBodies,
    help: "Remote-policy answer bodies kept out of job data (not the protocol's JSON error), by kind",
    labelNames: ["kind"] as const,
    registers,
  });
  for (const kind of FOREIGN_BODY_KINDS) policyForeignBodies.inc({ kind }, 0);
  const policyTokens = new Counter({
    name: METRIC.policyTokens,
    help: "Model tokens the policies' answers cost, as the model server reported them: kind prompt or completion",
    labelNames: ["kind"] as const,
    registers,
  });
  for (const kind of ["prompt", "completion"]) policyTokens.inc({ kind }, 0);
  const policyLatency = new Histogram({
    name: METRIC.policyLatency,
    help: "Time one policy answer took as the policy measured it (a model's, its retries included), for policies that report it",
    buckets: POLICY_LATENCY_BUCKETS_SEC,
    registers,
  });
  const adbCalls = new Counter({
    name: METRIC.adbCalls,
    help: "adb calls by operation and status (ok or the error kind)",
    labelNames: ["op", "status"] as const,
    registers,
  });
  const adbStatus = closedLabel(METRIC.adbCalls, "status", ADB_STATUSES, report);
  /** Every action counts an adb call: one bound counter per (op, status), both bounded label sets. */
  const adbCallCounter = boundCounterPerLabels(adbCalls);
  const adbErrors = new Counter({
    name: METRIC.adbErrors,
    help: "Failed adb calls by error kind",
    labelNames: ["kind"] as const,
    registers,
  });
  const adbDuration = new Histogram({
    name: METRIC.adbCallDuration,
    help: "Duration of adb calls by operation",
    labelNames: ["op"] as const,
    buckets: ADB_CALL_BUCKETS_SEC,
    registers,
  });
  /** Every action reports an adb call: one bound observer per op instead of prom-client's per-call label hashing. */
  const adbDurationObserver = boundHistogramPerLabel(adbDuration, "op", ADB_CALL_BUCKETS_SEC);
  // Counted when scraped (setDeviceStateSource): a host changes device states thousands of times a second, and
  // counting its devices on each change made every change cost O(devices).
  let deviceStateSource: (() => Record<string, number>) | undefined;
  const devices = new Gauge({
    name: METRIC.devices,
    help: "Devices this process manages, by state",
    labelNames: ["state"] as const,
    registers,
    collect: () => {
      if (deviceStateSource) setDeviceStates(deviceStateSource());
    },
  });
  const setDeviceStates = (counts: Record<string, number>): void => {
    devices.reset();
    for (const [state, n] of Object.entries(counts)) {
      if (valid(METRIC.devices, n)) devices.inc({ state: deviceState(METRIC.devices, state) }, n);
    }
  };
  const recoveries = new Counter({
    name: METRIC.recoveries,
    help: "Device recoveries (reconnect, relaunch, …) by cause",
    labelNames: ["cause"] as const,
    registers,
  });

  const deviceTransports = new Gauge({
    name: METRIC.deviceTransports,
    help: "Bound devices by action transport: grpc (the emulator's gRPC endpoint) or adb (the adb server)",
    labelNames: ["transport"] as const,
    registers,
  });
  const transport = closedLabel(METRIC.deviceTransports, "transport", TRANSPORTS, report);
  const snapshotFallbacks = new Counter({
    name: METRIC.snapshotFallbacks,
    help: "Snapshot resets whose snapshot did not load, so the full setup + reset ran, by the load's error kind",
    labelNames: ["reason"] as const,
    registers,
  });
  const fallbackReason = closedLabel(METRIC.snapshotFallbacks, "reason", ADB_STATUSES, report);
  const emulatorRelaunches = new Counter({
    name: METRIC.emulatorRelaunches,
    help: "Emulators the worker launched and relaunched, by cause: exited (or crashed), hung (health check), boot_timeout",
    labelNames: ["cause"] as const,
    registers,
  });
  const relaunchCause = closedLabel(METRIC.emulatorRelaunches, "cause", RELAUNCH_CAUSES, report);
  for (const c of RELAUNCH_CAUSES) emulatorRelaunches.inc({ cause: c }, 0);
  for (const t of TRANSPORTS) deviceTransports.set({ transport: t }, 0);
  for (const kind of ADB_STATUSES) if (kind !== "ok") snapshotFallbacks.inc({ reason: kind }, 0);
  const episodeResets = new Counter({
    name: METRIC.episodeResets,
    help: "Episode starts by reset mode asked for (steps, setup-snapshot, start-snapshot) and how the device was reset (steps, snapshot, start_snapshot, snapshot_fallback)",
    labelNames: ["mode", "kind"] as const,
    registers,
  });
  const resetMode = closedLabel(METRIC.episodeResets, "mode", RESET_MODES, report);
  const resetKind = closedLabel(METRIC.episodeResets, "kind", RESET_KINDS, report);
  for (const mode of RESET_MODES) for (const kind of RESET_KINDS) episodeResets.inc({ mode, kind }, 0);

  // --- trajectories ------------------------------------------------------------------------
  const trajectoryBytes = new Counter({
    name: METRIC.trajectoryBytes,
    help: "Bytes of trajectory files written",
    registers,
  });
  const trajectoryFiles = new Counter({
    name: METRIC.trajectoryFiles,
    help: "Trajectory files written",
    registers,
  });

  // --- scheduling and queues ---------------------------------------------------------------
  const campaigns = new Counter({
    name: METRIC.campaignsSubmitted,
    help: "Campaigns accepted by the scheduler",
    registers,
  });
  const jobsEnqueued = new Counter({
    name: METRIC.jobsEnqueued,
    help: "Episode jobs put on the queue, by task",
    labelNames: ["task"] as const,
    registers,
  });
  const jobStartLatency = new Histogram({
    name: METRIC.jobStartLatency,
    help: "Time from enqueue to a worker starting the job",
    buckets: JOB_START_LATENCY_BUCKETS_SEC,
    registers,
  });
  const jobFetchBurst = new Histogram({
    name: METRIC.jobFetchBurst,
    help: "Episode jobs a worker host took at once beyond the one it fetched (its free devices' share of a burst)",
    buckets: [1, 2, 4, 8, 16, 32, 64],
    registers,
  });
  let queueDepthSource: QueueDepthSource | undefined;
  const queueStateLabel = closedLabel(METRIC.queueJobs, "state", QUEUE_STATES, report);
  const queueJobs: Gauge<"queue" | "state"> = new Gauge({
    name: METRIC.queueJobs,
    help: "Jobs per queue and state, read at scrape time",
    labelNames: ["queue", "state"] as const,
    registers,
    collect: () =>
      (scrapeCollection = collectQueueDepth({
        gauge: queueJobs,
        source: () => queueDepthSource,
        timeoutMs: opts.queueDepthTimeoutMs ?? 2000,
        collectErrors,
        queueLabel: (v) => queueName(METRIC.queueJobs, v),
        stateLabel: queueStateLabel,
        onError: (error) => opts.onCollectError?.({ source: "queue_depth", error }),
      })()),
  });

  // --- exactly-once commits and Redis --------------------------------------------------------
  const commits = new Counter({
    name: METRIC.commits,
    help: "Episode commit attempts by result: committed, duplicate_prevented (another attempt had committed), completed_from_claim, lock_lost",
    labelNames: ["result"] as const,
    registers,
  });
  const commitResult = closedLabel(METRIC.commits, "result", COMMIT_RESULTS, report);
  const filesQuarantined = new Counter({
    name: METRIC.filesQuarantined,
    help: "Episode files moved out of readers' sight because the farm-wide claim names another file",
    registers,
  });
  const retries = new Counter({
    name: METRIC.episodeRetries,
    help: "Episode attempts that end in a retry, by cause",
    labelNames: ["cause"] as const,
    registers,
  });
  const retryCause = closedLabel(METRIC.episodeRetries, "cause", RETRY_CAUSES, report);
  // Which build is running where: join it onto any series (`* on(instance) group_left(version) farm_build_info`).
  const buildInfo = new Gauge<"version" | "node_version">({ name: METRIC.buildInfo, help: "Always 1; labels: the farm's version and the Node.js version of this process", labelNames: ["version", "node_version"], registers });
  buildInfo.set({ version: opts.version ?? FARM_VERSION, node_version: process.versions.node }, 1);
  const redisUp = new Gauge({ name: METRIC.redisUp, help: "1 while this process reaches Redis, 0 during an outage", registers });
  redisUp.set(1);
  const redisOutages = new Counter({ name: METRIC.redisOutages, help: "Redis outages seen by this process", registers });
  for (const r of COMMIT_RESULTS) commits.inc({ result: r }, 0);
  for (const c of RETRY_CAUSES) retries.inc({ cause: c }, 0);

  registry.registerMetric(labelOverflow);
  registry.registerMetric(invalidValues);
  registry.registerMetric(collectErrors);

  // Zero series for the closed error sets, so rate() and alerts see them before the first error.
  for (const kind of ADB_STATUSES) if (kind !== "ok") adbErrors.inc({ kind }, 0);
  for (const code of POLICY_ERROR_CODES) policyErrors.inc({ code }, 0);

  return {
    registry,
    /** The exposition text, as `/metrics` serves it. */
    metricsText: (): Promise<string> => registry.metrics(),
    /** The content type matching `metricsText()`. */
    get contentType(): string {
      return registry.contentType;
    },

    episodeFinished(e: EpisodeFinished): void {
      const t = task(METRIC.episodes, e.taskId);
      const o = outcome(e.outcome);
      episodes.inc({ task: t, outcome: o, cause: cause(e.cause) });
      episodeOrigins.inc({ origin: e.origin === "remote" ? "remote" : "campaign", outcome: o });
      if (valid(METRIC.episodeDuration, e.durationSec)) episodeDuration.observe({ task: t, outcome: o }, e.durationSec);
      if (valid(METRIC.episodeSteps, e.steps)) {
        episodeSteps.observe({ task: t }, e.steps);
        steps.inc({ task: t }, e.steps);
      }
      if (valid(METRIC.episodeReward, e.reward, true)) episodeReward.observe({ task: t }, e.reward);
    },
    /**
     * Creates this task's counter series at 0 — farm_steps_total{task}, farm_extras_dropped_total{task}
     * and farm_episodes_total{task,outcome,cause} for DECLARED_EPISODE_ENDS — so rate()/increase() count
     * the first episode (they miss the first increase of a series whose first sample already holds it).
     * Call it when a device is bound to the task, before its first episode. Idempotent. The task takes a
     * slot of the task cap like any recording; past the cap (or an id that is not an id) it declares the
     * "other" series, without counting an overflow (nothing was recorded).
     */
    declareTask(taskId: string): void {
      const t = task(METRIC.episodes, taskId, true);
      for (const [o, c] of DECLARED_EPISODE_ENDS) episodes.inc({ task: t, outcome: o, cause: c }, 0);
      steps.inc({ task: t }, 0);
      extrasDropped.inc({ task: t }, 0);
    },
    stepPhase(p: StepPhase, seconds: number): void {
      if (!valid(METRIC.stepPhaseDuration, seconds)) return;
      phaseObserver(phase(p))(seconds);
    },
    /** One read of the screen as a tree. */
    screenTreeRead(source: string, outcome: string): void {
      screenTreeReads.inc({ source: treeSource(source), outcome: treeOutcome(outcome) });
    },
    /** One agent answer that was a UI action (its resolved op) or invalid. */
    uiAction(op: string): void {
      uiActions.inc({ op: uiOp(op) });
    },
    adbCall(c: AdbCall): void {
      const op = adbOp(METRIC.adbCalls, c.op);
      const status = adbStatus(c.status);
      adbCallCounter({ op, status })();
      if (status !== "ok") adbErrors.inc({ kind: status });
      if (valid(METRIC.adbCallDuration, c.seconds)) adbDurationObserver(op)(c.seconds);
    },
    /** Replaces all device-state counts: states absent from `counts` drop out. */
    setDeviceStates,
    /** Reads the per-state device counts from `source` at every scrape (instead of setDeviceStates on each change). */
    setDeviceStateSource(source: () => Record<string, number>): void {
      deviceStateSource = source;
    },
    /** Replaces the per-transport device counts (transports absent from `counts` read 0). */
    setDeviceTransports(counts: Partial<Record<Transport, number>>): void {
      for (const t of TRANSPORTS) deviceTransports.set({ transport: t }, 0);
      for (const [t, n] of Object.entries(counts)) if (valid(METRIC.deviceTransports, n)) deviceTransports.inc({ transport: transport(t) }, n);
    },
    /** A snapshot reset fell back to setup + reset; `reason` is the failed load's status. */
    snapshotFallback(reason: StepStatus): void {
      snapshotFallbacks.inc({ reason: fallbackReason(reason) });
    },
    /** An episode started: the reset mode it asked for and how the device was reset. */
    episodeReset(mode: ResetModeLabel, kind: ResetKindLabel): void {
      episodeResets.inc({ mode: resetMode(mode), kind: resetKind(kind) });
    },
    /** The worker relaunched an emulator it launched. */
    emulatorRelaunch(cause: RelaunchCause): void {
      emulatorRelaunches.inc({ cause: relaunchCause(cause) });
    },
    recovery(c: string): void {
      recoveries.inc({ cause: recoveryCause(METRIC.recoveries, c) });
    },
    /** One HTTP exchange with a remote policy; `size` messages for a batched one. */
    policyRequest(mode: PolicyMode, ok: boolean, size: number): void {
      policyRequests.inc({ mode: POLICY_MODES.includes(mode) ? mode : "single", result: ok ? "ok" : "error" });
      if (mode === "batched" && valid(METRIC.policyBatchSize, size)) policyBatchSize.observe(size);
    },
    /** A remote policy's answer body kept out of job data. */
    policyForeignBody(kind: ForeignBodyKind): void {
      if (FOREIGN_BODY_KINDS.includes(kind)) policyForeignBodies.inc({ kind });
    },
    /** What one answer cost, from the step event's `policyUsage` (fields the policy did not report are skipped). */
    policyUsage(u: { promptTokens?: number; completionTokens?: number; latencyMs?: number }): void {
      if (u.promptTokens !== undefined && valid(METRIC.policyTokens, u.promptTokens)) policyTokens.inc({ kind: "prompt" }, u.promptTokens);
      if (u.completionTokens !== undefined && valid(METRIC.policyTokens, u.completionTokens)) policyTokens.inc({ kind: "completion" }, u.completionTokens);
      if (u.latencyMs !== undefined && valid(METRIC.policyLatency, u.latencyMs)) policyLatency.observe(u.latencyMs / 1000);
    },
    policyError(code: PolicyErrorCode): void {
      policyErrors.inc({ code: policyCode(code) });
    },
    trajectoryWritten(w: { bytes: number; files?: number }): void {
      if (valid(METRIC.trajectoryBytes, w.bytes)) trajectoryBytes.inc(w.bytes);
      const files = w.files ?? 1;
      if (valid(METRIC.trajectoryFiles, files)) trajectoryFiles.inc(files);
    },
    logLineMalformed(n = 1): void {
      if (valid(METRIC.logLinesMalformed, n)) logLinesMalformed.inc(n);
    },
    extraDropped(taskId: string, n = 1): void {
      if (valid(METRIC.extrasDropped, n)) extrasDropped.inc({ task: task(METRIC.extrasDropped, taskId) }, n);
    },
    /** A worker started a job `latencySec` after it was enqueued. */
    jobStarted(latencySec: number): void {
      if (valid(METRIC.jobStartLatency, latencySec)) jobStartLatency.observe(latencySec);
    },
    /** A worker host's fetch found jobs waiting and took `jobs` more at once. */
    jobFetchBurst(jobs: number): void {
      if (valid(METRIC.jobFetchBurst, jobs)) jobFetchBurst.observe(jobs);
    },
    commit(result: CommitResult): void {
      commits.inc({ result: commitResult(result) });
    },
    fileQuarantined(n = 1): void {
      if (valid(METRIC.filesQuarantined, n)) filesQuarantined.inc(n);
    },
    /** `cause`: a retryable QueueErrorCode (any case) or "stalled"; unknown causes become "other". */
    episodeRetry(cause: string): void {
      retries.inc({ cause: retryCause(cause.toLowerCase()) });
    },
    /** Redis reachable (true) or not; each change to false counts one outage. */
    setRedisUp(up: boolean): void {
      if (!up) redisOutages.inc();
      redisUp.set(up ? 1 : 0);
    },
    campaignSubmitted(): void {
      campaigns.inc();
    },
    jobsEnqueued(taskId: string, n = 1): void {
      if (valid(METRIC.jobsEnqueued, n)) jobsEnqueued.inc({ task: task(METRIC.jobsEnqueued, taskId) }, n);
    },
    /**
     * Where farm_queue_jobs comes from, called at every scrape: e.g. for each BullMQ queue,
     * `Object.entries(await q.getJobCounts())` → `{ queue: q.name, state, count }`.
     */
    setQueueDepthSource(source: QueueDepthSource | undefined): void {
      queueDepthSource = source;
    },
  };
}
