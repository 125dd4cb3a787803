/**
 * The `human` policy: a person drives the device. `act()` shows the operator the step (goal, elements, screen size,
 * step count, limits) through an `OperatorChannel` and waits for the operator's next action, which arrives as
 * AndroidWorld's JSON action (a `UiAction`, the same path an `llm` answer takes). The channel is the host's
 * (the worker relays through Redis to the scheduler, which relays to the operator's browser); this module only
 * knows its interface. An operator who leaves (past the grace period) or idles past the limit makes the channel
 * reject with `PolicyError("operator_abandoned")`, which ends the episode as `operator_abandoned` (not a device
 * failure). The policy's name becomes `human:<operator id>` once an operator has answered.
 */
import { PolicyError } from "./errors.ts";
import { parseUiAction, UI_TEXT_MAX_CHARS, type UiAction } from "./ui-action.ts";
import type { EpisodeContext, Observation, Policy, PolicyDecision, StepOutcome, UiElement } from "./types.ts";

/** What the operator is shown for one step. */
export interface OperatorView {
  step: number;
  goal: string;
  screen: { width: number; height: number };
  elements?: UiElement[];
  previous?: StepOutcome;
}

/** The operator's answer to one step, as the relay delivers it (untrusted: checked here). */
export interface OperatorAnswer {
  /** The operator's id (the lease holder). */
  operator: string;
  /** AndroidWorld's JSON action. */
  action: unknown;
  /** AndroidControl's per-step instruction, when the operator typed one. */
  instruction?: string;
}

/** The host's link to the operator of one episode. */
export interface OperatorChannel {
  /** Shows the step and waits for the operator's answer; rejects with PolicyError `operator_abandoned` or `aborted`. */
  ask(view: OperatorView, signal?: AbortSignal): Promise<OperatorAnswer>;
  /** The episode ended (told once, before close). */
  end?(info: { outcome: string; cause: string; steps: number }): Promise<void>;
  close(): Promise<void>;
}

export interface HumanPolicyOptions {
  channel: OperatorChannel;
  /** The longest one step may wait for an operator (the policy deadline's default). */
  actDeadlineMs: number;
}

/** Operator ids: what the scheduler's operator tokens name (also the policy name's tail). */
export const OPERATOR_ID_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;
/** The longest per-step instruction kept. */
export const INSTRUCTION_MAX_CHARS = 500;

export function humanPolicy(opts: HumanPolicyOptions): Policy<PolicyDecision> {
  let operator: string | undefined;
  let goal = "";
  let closed = false;
  return {
    get name() {
      return operator ? `human:${operator}` : "human";
    },
    version: "1",
    needsPixels: false,
    needsElements: true,
    actDeadlineMs: opts.actDeadlineMs,
    async reset(ctx: EpisodeContext) {
      goal = ctx.goal ?? "";
    },
    async act(obs: Observation, signal?: AbortSignal): Promise<PolicyDecision> {
      if (closed) throw new PolicyError("closed", "the human policy is closed");
      const t0 = performance.now();
      const view: OperatorView = {
        step: obs.stepIndex,
        goal: obs.goal ?? goal,
        screen: { ...obs.screen },
        ...(obs.elements ? { elements: obs.elements } : {}),
        ...(obs.previous ? { previous: obs.previous } : {}),
      };
      const a = await opts.channel.ask(view, signal);
      if (typeof a.operator === "string" && OPERATOR_ID_PATTERN.test(a.operator)) operator = a.operator;
      const latencyMs = Math.round(performance.now() - t0);
      const instruction = typeof a.instruction === "string" && a.instruction.trim() ? a.instruction.trim().slice(0, INSTRUCTION_MAX_CHARS) : undefined;
      const given = safeJson(a.action);
      const ui = parseUiAction(a.action);
      const base = { given, usage: { latencyMs }, ...(instruction ? { instruction } : {}) };
      if ("invalid" in ui) return { ...base, invalid: ui.invalid };
      return { ...base, action: ui satisfies UiAction };
    },
    async endEpisode(end) {
      await opts.channel.end?.({ outcome: end.outcome, cause: end.cause, steps: end.steps });
    },
    async close() {
      closed = true;
      await opts.channel.close();
    },
  };
}

function safeJson(v: unknown): string {
  try {
    return (JSON.stringify(v) ?? "null").slice(0, UI_TEXT_MAX_CHARS + 200);
  } catch {
    return "null";
  }
}
