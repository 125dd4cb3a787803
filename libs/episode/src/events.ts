/**
 * The runner's typed events, for the worker and @farm/metrics to wire up. Emitted through `safeEmit`: a
 * listener that throws is ignored, never breaks an episode.
 */
import type { SettleKind } from "./settle-spec.ts";
import type { PolicyUsage } from "@farm/policy";
import type { StepStatus } from "@farm/adb";
import type { ResetMode } from "@farm/task";
import type { ResetKind } from "./snapshot-reset.ts";
import type { EndCause, EpisodeOutcome } from "./trajectory-types.ts";

/** Milliseconds spent in each phase of one step. */
export interface StepPhasesMs {
  policy: number;
  action: number;
  observation: number;
  log: number;
  /** Within `observation`: reading the screen as a tree (the device's answer), when it was read. */
  a11yRead?: number;
  /** Within `observation`: the farm's own work on that tree (elements, compact form). */
  a11yDerive?: number;
  /** The whole step, policy to record. */
  total?: number;
}

export type EpisodeEvent =
  | { type: "device:bind"; serial: string; ok: boolean; durationMs: number; detail: string }
  /** `resetMode`: what the episode asked for; `resetKind`: what happened (a fallback, a device without snapshots). */
  | { type: "episode:start"; serial: string; taskId: string; episodeIndex: number; seed: number; resetMs: number; resetMode?: ResetMode; resetKind?: ResetKind }
  /** `uiAction`: a step whose answer was a UI action (its resolved op, or `invalid`); `policyUsage`: what the answer cost, when the policy said. */
  | {
      type: "step";
      serial: string;
      taskId: string;
      episodeIndex: number;
      step: number;
      reward: number;
      phasesMs: StepPhasesMs;
      uiAction?: string;
      policyUsage?: PolicyUsage;
      /** The settle policy's wait after the action (issue 36), when the episode has one: its kind, time and whether it hit its cap. */
      settle?: { kind: SettleKind; ms: number; capped: boolean };
      /** When the step's action began and when its observation began (epoch ms, the host's clock). */
      actedAt?: number;
      observedAt?: number;
    }
  | {
      type: "episode:end";
      serial: string;
      taskId: string;
      episodeIndex: number;
      outcome: EpisodeOutcome;
      cause: EndCause;
      causeDetail: string;
      steps: number;
      totalReward: number;
      durationMs: number;
    }
  | { type: "device:recovery"; serial: string; attempt: number; ok: boolean; detail: string; durationMs: number }
  | { type: "device:unusable"; serial: string; reason: string }
  | { type: "app-screen:check"; serial: string; step: number; match: string; left: boolean }
  | { type: "extra:dropped"; serial: string; taskId: string; name: string; reason: string; detail: string }
  | { type: "log:malformed"; serial: string; taskId: string; what: string; detail: string }
  /** A snapshot reset's load failed (`reason` = the load's status: timeout, adb_error, …); the full setup + reset ran instead. */
  | { type: "snapshot:fallback"; serial: string; taskId: string; reason: StepStatus };

export type EpisodeEventType = EpisodeEvent["type"];
export type EventHook = (event: EpisodeEvent) => void;

export function safeEmit(hook: EventHook | undefined, event: EpisodeEvent): void {
  if (!hook) return;
  try {
    hook(event);
  } catch {
    /* a broken listener must not break an episode */
  }
}
