/**
 * One OpenEnv session: a device of this host leased for the session's lifetime (taken out of the campaign pool,
 * given back on close), and the episodes the client drives on it with reset / step. Same structure as a
 * dm_env_rpc world (../remote-env/world.ts): each episode is an `EpisodeRun` of libs/episode whose policy hands
 * back the client's action, so limits, rewards (logcat and the task instance's checks, episode-scoring.ts),
 * invalid answers and truncation causes are the runner's; a reset into a family runs its instance (parameters
 * drawn from the seed or fixed by the client, set-up, checks); every finished episode is committed like a
 * campaign's (../remote-env/commit-remote.ts), the session's id as its campaign.
 */
import { randomBytes, randomInt } from "node:crypto";
import { coerceError } from "@farm/errors";
import type { DeviceSession, EpisodeRun, EpisodeTrajectory } from "@farm/episode";
import { encodeFrame, type FrameSpec } from "@farm/frames";
import type { Logger } from "@farm/log";
import type { FarmMetrics } from "@farm/metrics";
import type { Observation, PolicyAnswer } from "@farm/policy";
import { fixedParamsProblem } from "@farm/scoring";
import type { LoadedTask, TaskCatalog } from "@farm/task";
import { episodeIdOf } from "@farm/trajectory";
import type { CommitDeps } from "../commit-flow.ts";
import type { DeviceLease, DevicePool } from "../device-lease.ts";
import { commitRemoteEpisode } from "../remote-env/commit-remote.ts";
import { RemotePolicy } from "../remote-env/remote-policy.ts";
import { taskInstanceFor } from "../task-instance.ts";
import { taskServerOptions } from "../task-server-options.ts";
import { execution, OpenEnvError, validation, type ResetRequest } from "./messages.ts";

export const OPENENV_POLICY_NAME = "remote:openenv";

export interface EnvSessionDeps {
  pool: DevicePool;
  catalog: TaskCatalog;
  commit: CommitDeps;
  metrics: FarmMetrics;
  logger: Logger;
  /** Recorded-frame cadence of the host's episode config (0 = no frames in the trajectory). */
  frameEvery: number;
  taskServerAllowedHosts: readonly string[];
}

/** What reset and step answer: OpenEnv's observation payload (`{"observation", "reward", "done"}`). */
export interface ObservationPayload {
  observation: Record<string, unknown>;
  reward: number | null;
  done: boolean;
}

export class EnvSession {
  readonly id = randomBytes(8).toString("hex");
  /** The campaign id of the session's committed episodes. */
  readonly campaignId = `openenv-${this.id}`;
  readonly createdAtMs = Date.now();
  lastActivityMs = Date.now();
  private readonly policy = new RemotePolicy(OPENENV_POLICY_NAME);
  private session: DeviceSession | undefined;
  private task: LoadedTask | undefined;
  private run: EpisodeRun | undefined;
  private ac = new AbortController();
  private request: ResetRequest | undefined;
  private episodes = 0;
  private runIndex = 0;
  private nextSeed = randomInt(2 ** 31 - 1);
  private seed = 0;
  private stepCount = 0;
  private totalReward = 0;
  private done = false;
  private goal = "";
  private lastEnd: { outcome: string; cause: string } | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private busy = 0;
  /** Steps taken in the session, across its episodes. */
  steps = 0;

  private constructor(
    private readonly lease: DeviceLease,
    private readonly deps: EnvSessionDeps,
  ) {}

  /** Leases an idle device of this host, or fails with CAPACITY_REACHED. */
  static open(deps: EnvSessionDeps, counts: { active: number; max: number }): EnvSession {
    const lease = deps.pool.lease();
    if (!lease) throw new OpenEnvError("CAPACITY_REACHED", `no idle device on worker ${deps.commit.workerName}: every device runs a campaign job or another session; try again later or another host`, { active_sessions: counts.active, max_sessions: counts.max });
    return new EnvSession(lease, deps);
  }

  get serial(): string {
    return this.lease.serial;
  }

  /** True while a request runs (the idle reaper leaves the session alone). */
  get active(): boolean {
    return this.busy > 0;
  }

  /** Requests of a session run one at a time. */
  exclusive<T>(f: () => Promise<T>): Promise<T> {
    this.busy++;
    const p = this.chain.then(f);
    this.chain = p
      .catch(() => undefined)
      .finally(() => {
        this.busy--;
        this.lastActivityMs = Date.now();
      });
    return p;
  }

  private get episodeId(): string | undefined {
    if (this.request?.episodeId !== undefined) return this.request.episodeId;
    return this.request ? episodeIdOf(this.campaignId, this.runIndex) : undefined;
  }

  /** Ends a running episode (cancelled, committed) and starts the next one on the requested task. */
  async reset(req: ResetRequest): Promise<ObservationPayload> {
    const task = this.deps.catalog.byId.get(req.taskId);
    if (!task) throw validation(`reset: unknown task '${req.taskId.slice(0, 80)}'; this worker serves: ${[...this.deps.catalog.byId.keys()].slice(0, 50).join(", ")}`);
    if (req.params) {
      const f = task.family;
      if (!f) throw validation(`reset: task '${task.task.id}' is not a task family; 'params' are for families (*.family.yaml)`);
      if (!f.taskServer) {
        const problem = fixedParamsProblem(f.params, req.params);
        if (problem) throw validation(`reset: field 'params': ${problem}`);
      }
    }
    await this.endEpisode();
    let session: DeviceSession;
    try {
      session = await this.lease.sessionFor(task);
    } catch (e) {
      throw execution(`task ${task.task.id} cannot run on device ${this.serial}: ${coerceError(e).message}`);
    }
    if (session.state !== "ready") throw execution(`device ${this.serial} is ${session.state}${session.state === "unusable" ? `: ${session.unusableReason}` : ""}; close this session and open another`);
    this.session = session;
    this.task = task;
    this.request = req;
    this.policy.needsPixels = req.screenshot !== undefined;
    this.policy.needsElements = req.elements;
    if (req.seed !== undefined) this.nextSeed = req.seed;
    const seed = (this.seed = this.nextSeed);
    this.nextSeed = (this.nextSeed + 1) % 2 ** 31;
    const index = (this.runIndex = this.episodes++);
    this.stepCount = 0;
    this.totalReward = 0;
    this.done = false;
    this.lastEnd = undefined;
    this.ac = new AbortController();
    const log = this.deps.logger.child({ session: this.id });
    const key = { campaignId: this.campaignId, index, seed, ...(req.params ? { fixedParams: req.params } : {}), ...(req.goal !== undefined ? { goal: req.goal } : {}) };
    const instance = taskInstanceFor(task, key, taskServerOptions(this.deps.taskServerAllowedHosts, this.deps.metrics, log));
    let run: EpisodeRun;
    try {
      run = await session.startEpisode({
        seed,
        index,
        policy: this.policy,
        signal: this.ac.signal,
        limits: req.limits,
        frameEvery: this.deps.frameEvery,
        ...(req.goal !== undefined ? { goal: req.goal } : {}),
        ...(instance ? { instance } : {}),
      });
    } catch (e) {
      throw execution(`device ${this.serial} cannot start an episode of ${task.task.id}: ${coerceError(e).message}`);
    }
    await run.reset();
    this.run = run;
    if (run.ended) {
      const traj = await this.finishRun();
      throw execution(`reset failed (${traj?.cause ?? "unknown"}): ${traj?.causeDetail ?? ""}`);
    }
    this.goal = run.observation?.goal ?? "";
    return { observation: await this.observationOf(run.observation!, undefined), reward: null, done: false };
  }

  /** One step with the client's action; the last one finishes the episode (scored, committed). */
  async step(answer: PolicyAnswer): Promise<ObservationPayload> {
    const run = this.run;
    if (!run) throw execution(this.done ? "the episode is over (done was true): send a reset to start the next one" : "no episode: send a reset first (with the task to run)");
    this.policy.give(answer);
    const before = run.recordedSteps.length;
    const more = await run.step();
    const took = run.recordedSteps.length > before;
    if (took) {
      this.stepCount++;
      this.steps++;
      this.deps.metrics.openenvStep();
    }
    if (more) {
      const reward = took ? run.recordedSteps[run.recordedSteps.length - 1]!.reward : 0;
      this.totalReward += reward;
      return { observation: await this.observationOf(run.observation!, undefined), reward, done: false };
    }
    const traj = await this.finishRun();
    // finish() adds the final score's reward to the last step: read it after.
    const reward = took ? run.recordedSteps[run.recordedSteps.length - 1]!.reward : 0;
    this.totalReward += reward;
    return { observation: await this.observationOf(run.observation, traj), reward, done: true };
  }

  /** OpenEnv's State: `episode_id` and `step_count`, and the farm's own fields beside them. */
  state(): Record<string, unknown> {
    return {
      episode_id: this.episodeId ?? null,
      step_count: this.stepCount,
      session_id: this.id,
      // The committed trajectory's episode id (campaign openenv-<session>).
      farm_episode_id: this.request ? episodeIdOf(this.campaignId, this.runIndex) : null,
      device: this.serial,
      task_id: this.task?.task.id ?? null,
      goal: this.goal,
      seed: this.request ? this.seed : null,
      done: this.done,
      total_reward: this.totalReward,
      episodes: this.episodes,
      ...(this.lastEnd ? { outcome: this.lastEnd.outcome, cause: this.lastEnd.cause } : {}),
    };
  }

  private async observationOf(obs: Observation | undefined, traj: EpisodeTrajectory | undefined): Promise<Record<string, unknown>> {
    const spec = this.request?.screenshot;
    const px = obs?.pixels;
    return {
      goal: obs?.goal ?? this.goal,
      screenshot: spec && px ? await screenshotOf(px, spec) : null,
      elements: this.request?.elements && obs?.elements ? obs.elements : null,
      screen: obs?.screen ?? null,
      orientation: obs?.orientation ?? 0,
      step_index: this.stepCount,
      task_id: this.task?.task.id ?? null,
      episode_id: this.episodeId ?? null,
      last_action: obs?.previous ?? null,
      extras: obs?.extras ?? {},
      outcome: traj?.outcome ?? null,
      cause: traj?.cause ?? null,
      success: traj?.success ?? null,
      params: traj?.params ?? null,
      checks: traj?.checks ?? null,
      score_error: traj?.scoreError ?? null,
    };
  }

  /** Finishes the current run and commits its trajectory (a commit failure is logged; the file stays pending). */
  private async finishRun(): Promise<EpisodeTrajectory | undefined> {
    const run = this.run;
    if (!run) return undefined;
    this.run = undefined;
    this.done = true;
    const log = this.deps.logger;
    let traj: EpisodeTrajectory;
    try {
      traj = await run.finish();
    } catch (e) {
      log.error({ event: "openenv:episode-finish-failed", session: this.id, err: coerceError(e).message }, "finishing an OpenEnv episode failed");
      return undefined;
    }
    this.lastEnd = { outcome: traj.outcome, cause: traj.cause };
    try {
      const ref = { campaignId: this.campaignId, episodeIndex: this.runIndex };
      await commitRemoteEpisode(this.deps.commit, traj, { ref, task: this.task!, createdAtMs: this.createdAtMs, frameEvery: this.deps.frameEvery, serial: traj.deviceSerial });
    } catch (e) {
      log.error({ event: "openenv:commit-failed", session: this.id, err: coerceError(e).message }, "committing an OpenEnv episode failed; the pending file is settled later");
    }
    return traj;
  }

  /** Ends a running episode as cancelled and commits it. */
  private async endEpisode(): Promise<void> {
    const run = this.run;
    if (!run) return;
    this.ac.abort();
    while (await run.step()) {
      /* aborted: ends at the next boundary */
    }
    await this.finishRun();
  }

  /** Ends the episode and gives the device back to the pool. Idempotent. */
  async close(): Promise<void> {
    try {
      await this.endEpisode();
    } finally {
      await this.lease.release();
    }
  }
}

async function screenshotOf(px: NonNullable<Observation["pixels"]>, spec: FrameSpec): Promise<Record<string, unknown>> {
  const bytes = await encodeFrame({ width: px.width, height: px.height, channels: 3, data: px.rgb }, spec);
  const size = spec.size ?? { width: px.width, height: px.height };
  return { format: spec.format, width: size.width, height: size.height, data: bytes.toString("base64") };
}
