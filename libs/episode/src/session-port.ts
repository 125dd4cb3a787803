/**
 * What one episode run needs from its device session, and nothing more. `DeviceSession` hands an `EpisodeRun`
 * this port (built from its private state); the run never sees the session, its channels or its recovery
 * machinery, and the session never imports the run's internals: no import cycle, no public `@internal` fields.
 */
import type { Screenshot, ScreenTree, ScreenTreeFailure, StepResult } from "@farm/adb";
import type { Logger } from "@farm/log";
import type { FrameSpec } from "@farm/frames";
import type { Action, UiAction, UiElement } from "@farm/policy";
import type { LoadedTask, ResetMode } from "@farm/task";
import type { DeviceCalls } from "@farm/scoring";
import type { AppScreenVerdict } from "./app-screen-monitor.ts";
import type { CompiledEpisodeConfig } from "./config.ts";
import type { EpisodeEvent } from "./events.ts";
import type { EpisodeFrames } from "./episode-frames.ts";
import type { ResetKind } from "./snapshot-reset.ts";
import type { StepsOutcome } from "./step-interpreter.ts";
import type { UiActuation } from "./ui-actuator.ts";
import type { EndCause, StepExtra } from "./trajectory-types.ts";
import type { A11yEventClock, SettleSignals } from "./settle.ts";

/** The reward, extras and end lines read from logcat since the last take (LogAccumulator's reading side). */
export interface EpisodeLog {
  take(): { reward: number; extras: StepExtra[] };
  takeExtras(): StepExtra[];
  /** Stop collecting (between episodes). */
  pause(): void;
  readonly episodeEnd: boolean;
  readonly lastScore: number | undefined;
  readonly counters: Readonly<Record<string, number>>;
}

export interface SessionPort {
  readonly serial: string;
  readonly task: LoadedTask;
  readonly config: CompiledEpisodeConfig;
  readonly logger: Logger;
  readonly log: EpisodeLog;
  /** Throws (`EpisodeError`) unless the session can run an episode; runs a due recovery first. */
  ensureReady(): Promise<void>;
  emit(e: EpisodeEvent): void;
  /** Adds to the session's cause-named counters. */
  count(key: string, by?: number): void;
  screen(): { width: number; height: number };
  orientation(): 0 | 1 | 2 | 3;
  /** Reads the orientation again; a failure comes back as the StepResult. */
  readOrientation(): Promise<StepResult | undefined>;
  screenshot(): Promise<Screenshot | StepResult>;
  /** The episode's screen captures and recorded frames (episode-frames.ts), in `spec` or the config's encoding. */
  frames(spec?: FrameSpec): EpisodeFrames;
  /** `gone` / `offline` when the adb server says so (and the driver can ask), else undefined. */
  deviceGone(): Promise<string | undefined>;
  /** Lifts a finger left down before a reset; a failure makes a relaunch due before the next episode. */
  liftFinger(): Promise<void>;
  /** Sends the action on the action channel; undefined when there is none. Never throws. */
  sendAction(action: Action): Promise<StepResult | undefined>;
  /** The screen as a tree (the driver's `screenTree`, within the adb call deadline). Never throws. */
  screenTree(): Promise<ScreenTree | ScreenTreeFailure>;
  /** The settle policies' signals on this device (settle-sources.ts); `events`: the episode's event clock, when open. */
  settleSignals(events?: A11yEventClock): SettleSignals;
  /** Opens the device's accessibility events for one episode (settle policy `events`); `close()` it when the episode ends. */
  openA11yEvents(): Promise<A11yEventClock & { close(): void }>;
  /** The device as a task instance may use it (@farm/scoring): AdbRequests, shell lines and the tree, each within the session's adb call deadline unless given one. */
  deviceCalls(): DeviceCalls;
  /** Carries out a UI action against the element list it was chosen on (ui-actuator.ts). Never throws. */
  actuate(ui: UiAction, elements: readonly UiElement[] | undefined, signal: AbortSignal): Promise<UiActuation>;
  /**
   * Resets the device as `mode` says (the reset steps; a setup snapshot load + the reset steps, snapshot-reset.ts;
   * or a start snapshot load instead of them, start-snapshot.ts) with collection paused, then resumes with a fresh
   * accumulator; `fail` when even a snapshot fallback's setup failed. `gameConfig`: this episode's RL_TASK_GAME_CONFIG
   * in place of the task's (its start_activity steps).
   */
  runResetSteps(seed: number, counters: Record<string, number>, signal: AbortSignal, mode: ResetMode, gameConfig?: Record<string, unknown>): Promise<{ steps: StepsOutcome; kind: ResetKind } | { fail: string }>;
  /** A reset was attempted (the setup state is no longer fresh). */
  resetDone(): void;
  /** Set when the log stream failed for good (device gone). */
  lostReason(): string | undefined;
  /** Malformed logcat lines seen so far on the current stream. */
  logcatMalformedLines(): number | undefined;
  /** Restarts the expected-app-screen cadence at the end of a reset. */
  startAppScreenChecks(nowMs: number): void;
  /** The app-screen check due at this step, started (it runs alongside the observation), or undefined. */
  appScreenCheck(episodeSteps: number, nowMs: number, budgetMs: number): Promise<AppScreenVerdict> | undefined;
  /** Bookkeeping of an ended episode before its trajectory is handed on: counters, bad-episode relaunches. */
  recordEnd(cause: EndCause, steps: number): void;
  /** After the trajectory is handed on: device trouble → recovery (or `needs_recovery`); a good episode refills the budget. */
  settle(cause: EndCause, detail: string, deferRecovery: boolean): Promise<void>;
}
