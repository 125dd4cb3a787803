/**
 * One remote world: a device leased from this host, bound to the world's task, and the episodes a client
 * drives on it with Reset / Step. Each episode is an `EpisodeRun` (libs/episode) whose policy hands back
 * the client's action, so limits, rewards, extras, app-screen checks and truncation causes are the
 * runner's; each finished episode is committed like a campaign's (commit-remote.ts).
 *
 * Step semantics (dm_env_rpc): the first Step after a Reset (or after an episode ended, or after joining)
 * ignores its actions and answers the episode's first observation with RUNNING; later Steps run one step
 * and answer RUNNING, or TERMINATED (the task ended it) / INTERRUPTED (a truncation: limit, device trouble).
 */
import { randomInt } from "node:crypto";
import { EnvironmentState, grpc, type Tensor } from "@farm/dm-env-rpc";
import { coerceError } from "@farm/errors";
import type { DeviceSession, EpisodeRun, EpisodeTrajectory } from "@farm/episode";
import type { Logger } from "@farm/log";
import type { LoadedTask } from "@farm/task";
import type { CommitDeps } from "../commit-flow.ts";
import type { DeviceLease, DevicePool } from "../device-lease.ts";
import { commitRemoteEpisode } from "./commit-remote.ts";
import { EnvError } from "./env-error.ts";
import { RemotePolicy } from "./remote-policy.ts";
import { wantsElements } from "./agent-specs.ts";
import { OBS, observationTensors, worldSpecs } from "./specs.ts";
import { answerOf } from "./step-answer.ts";
import type { WorldSettings } from "./settings.ts";

export interface WorldDeps {
  pool: DevicePool;
  commit: CommitDeps;
  logger: Logger;
  /** Recorded-frame cadence of the host's episode config (0 = no frames in the trajectory). */
  frameEvery: number;
}

export interface StepAnswer {
  state: number;
  observations: Record<string, Tensor>;
}

export class RemoteWorld {
  private readonly policy = new RemotePolicy();
  private lease: DeviceLease | undefined;
  private session: DeviceSession | undefined;
  private run: EpisodeRun | undefined;
  private ac = new AbortController();
  /** "fresh": reset done, first observation not yet answered. */
  private phase: "none" | "fresh" | "running" = "none";
  private episodeIndex = 0;
  private runIndex = 0;
  private nextSeed: number;
  private chain: Promise<unknown> = Promise.resolve();
  private busy = 0;
  /** Whether the client's latest Step asked for elements (unknown before its first Step). */
  private elementsWanted: boolean | undefined;
  lastActivityMs = Date.now();
  joinedBy: object | undefined;
  readonly createdAtMs = Date.now();
  frame = { height: 0, width: 0 };

  constructor(
    readonly name: string,
    readonly task: LoadedTask,
    readonly settings: WorldSettings,
    private readonly deps: WorldDeps,
  ) {
    this.nextSeed = settings.seed ?? randomInt(2 ** 31 - 1);
  }

  get serial(): string | undefined {
    return this.lease?.serial;
  }

  /** True while a request is running (the idle reaper leaves the world alone). */
  get active(): boolean {
    return this.busy > 0;
  }

  /** Requests on a world run one at a time, whichever stream (or the reaper) sends them. */
  exclusive<T>(f: () => Promise<T>): Promise<T> {
    this.busy++;
    const p = this.chain.then(f);
    this.chain = p.catch(() => undefined).finally(() => {
      this.busy--;
      this.lastActivityMs = Date.now();
    });
    return p;
  }

  /** Leases an idle device and binds it to the task (setup steps). */
  async acquire(): Promise<void> {
    if (this.lease) return;
    const lease = this.deps.pool.lease();
    if (!lease) throw new EnvError(grpc.status.RESOURCE_EXHAUSTED, `no idle device on worker ${this.deps.commit.workerName} for world ${this.name}: every device runs a campaign job or another world; try again later or another host`);
    let session: DeviceSession;
    try {
      session = await lease.sessionFor(this.task);
    } catch (e) {
      await lease.release();
      throw new EnvError(grpc.status.FAILED_PRECONDITION, `task ${this.task.task.id} cannot run on device ${lease.serial}: ${coerceError(e).message}`);
    }
    if (session.state !== "ready") {
      await lease.release();
      throw new EnvError(grpc.status.UNAVAILABLE, `device ${lease.serial} is ${session.state}${session.state === "unusable" ? `: ${session.unusableReason}` : ""}; try again`);
    }
    this.lease = lease;
    this.session = session;
    const screen = session.screenSize;
    this.frame = this.settings.frameSize ?? { height: screen.height, width: screen.width };
    this.deps.logger.info({ event: "world:device-leased", world: this.name, serial: lease.serial, taskId: this.task.task.id }, "device leased for a remote world");
  }

  specs() {
    return worldSpecs(this.task.task, this.frame);
  }

  /**
   * A Reset request: ends a running episode (cancelled) and starts the next one. Its first observation
   * carries the screen whatever the previous Step asked, since the next Step may ask for pixels; and the elements
   * unless the client's latest Step showed it does not want them (a tree read can take seconds on a real device).
   */
  async reset(seed?: number): Promise<void> {
    this.policy.needsPixels = true;
    this.policy.needsElements = this.elementsWanted ?? true;
    await this.restart(seed);
  }

  private async restart(seed?: number): Promise<void> {
    await this.endEpisode();
    if (seed !== undefined) this.nextSeed = seed;
    await this.startEpisode();
  }

  private async startEpisode(): Promise<void> {
    await this.acquire();
    const session = this.session!;
    this.ac = new AbortController();
    const index = (this.runIndex = this.episodeIndex++);
    let run: EpisodeRun;
    try {
      const a11yEvery = this.settings.a11yEvery;
      run = await session.startEpisode({ seed: this.nextSeed++, index, policy: this.policy, signal: this.ac.signal, limits: this.settings.limits, frameEvery: this.deps.frameEvery, a11yEvery });
    } catch (e) {
      throw new EnvError(grpc.status.UNAVAILABLE, `device ${this.serial} cannot start an episode: ${coerceError(e).message}; destroy this world and create another`);
    }
    await run.reset();
    this.run = run;
    this.phase = "fresh";
    if (run.ended) {
      const traj = await this.finishRun();
      throw new EnvError(grpc.status.UNAVAILABLE, `reset failed (${traj?.cause ?? "unknown"}): ${traj?.causeDetail ?? ""}`);
    }
  }

  /** One Step request (`requested` already checked against the specs: checkRequested). */
  async step(actions: Record<string, Tensor>, requested: ReadonlySet<number>): Promise<StepAnswer> {
    this.policy.needsPixels = requested.has(OBS.pixels);
    this.policy.needsElements = this.elementsWanted = wantsElements(requested);
    if (this.phase === "none") await this.restart();
    const run = this.run!;
    if (this.phase === "fresh") {
      this.phase = "running";
      return { state: EnvironmentState.RUNNING, observations: this.observe(run, 0, 1, requested) };
    }
    this.policy.give(answerOf(actions, this.specs().actions));
    const before = run.recordedSteps.length;
    const more = await run.step();
    if (more) return { state: EnvironmentState.RUNNING, observations: this.observe(run, rewardOf(run, before), 1, requested) };
    const traj = await this.finishRun();
    const terminated = traj?.outcome === "terminated";
    return { state: terminated ? EnvironmentState.TERMINATED : EnvironmentState.INTERRUPTED, observations: this.observe(run, rewardOf(run, before), terminated ? 0 : 1, requested) };
  }

  private observe(run: EpisodeRun, reward: number, discount: number, requested: ReadonlySet<number>) {
    const obs = run.observation;
    if (!obs) throw new EnvError(grpc.status.UNAVAILABLE, "the episode has no observation (its reset failed)");
    const a11yTree = run.observedA11y?.tree;
    return observationTensors(this.task.task, { obs, reward, discount, frame: this.frame, ...(a11yTree ? { a11yTree } : {}) }, requested);
  }

  /** Finishes the current run and commits its trajectory (a commit failure is logged; the episode stays on disk pending). */
  private async finishRun(): Promise<EpisodeTrajectory | undefined> {
    const run = this.run;
    if (!run) return undefined;
    this.run = undefined;
    this.phase = "none";
    let traj: EpisodeTrajectory;
    try {
      traj = await run.finish();
    } catch (e) {
      this.deps.logger.error({ event: "world:episode-finish-failed", world: this.name, err: coerceError(e).message }, "finishing a remote episode failed");
      return undefined;
    }
    try {
      const ref = { campaignId: this.name, episodeIndex: this.runIndex };
      await commitRemoteEpisode(this.deps.commit, traj, { ref, task: this.task, createdAtMs: this.createdAtMs, frameEvery: this.deps.frameEvery, serial: traj.deviceSerial });
    } catch (e) {
      this.deps.logger.error({ event: "world:commit-failed", world: this.name, err: coerceError(e).message }, "committing a remote episode failed; the pending file is settled later");
    }
    return traj;
  }

  /** Ends a running episode as cancelled (truncated) and commits it. */
  async endEpisode(): Promise<void> {
    const run = this.run;
    if (!run) return;
    this.ac.abort();
    while (await run.step()) {
      /* aborted: ends at the next boundary */
    }
    await this.finishRun();
  }

  /** Ends the episode and gives the device back to the pool (the world can lease again on its next Reset/Step). */
  async release(): Promise<void> {
    await this.endEpisode();
    const lease = this.lease;
    this.lease = undefined;
    this.session = undefined;
    if (lease) {
      await lease.release();
      this.deps.logger.info({ event: "world:device-released", world: this.name, serial: lease.serial, episodes: this.episodeIndex }, "remote world gave its device back");
    }
  }
}

/** The reward of the step just taken (none when the run ended before taking one). */
function rewardOf(run: EpisodeRun, stepsBefore: number): number {
  const s = run.recordedSteps;
  return s.length > stepsBefore ? s[s.length - 1]!.reward : 0;
}
