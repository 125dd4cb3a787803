/**
 * A Step's actions as the answer the remote policy hands the episode run: an AndroidEnv touch (action_type,
 * touch_position) or a UI action (`ui_action`, AndroidWorld's JSON action as text). A malformed or invalid UI
 * action is still an answer: the run records the step as invalid and the episode goes on. Refused
 * (INVALID_ARGUMENT, the step not taken): a Step with both kinds, and what action-check.ts refuses.
 */
import type { TensorSpec, Tensor } from "@farm/dm-env-rpc";
import { ACTION_TYPES, GIVEN_MAX_CHARS, parseUiAction, type Action, type PolicyAnswer } from "@farm/policy";
import { conformActions } from "./action-check.ts";
import { invalid } from "./env-error.ts";
import { ACT } from "./specs.ts";
import { coerceError } from "@farm/errors";

const UI = String(ACT.ui_action);

/** The answer of a StepRequest (actions checked against the specs first). An empty `ui_action` counts as absent. */
export function answerOf(actions: Record<string, Tensor>, specs: Record<string, TensorSpec>): PolicyAnswer {
  const values = conformActions(actions, specs);
  const ui = values.get(UI);
  values.delete(UI);
  if (typeof ui !== "string" || ui === "") return touchOf(values);
  if (values.size > 0) {
    const others = [...values.keys()].map((uid) => `${uid} (${specs[uid]!.name})`).join(", ");
    throw invalid(`Step: action ${UI} (ui_action) goes alone, but this step also sets ${others}; send either a UI action or action_type/touch_position`);
  }
  return uiAnswer(ui);
}

/** A UI action's text as the run reads answers: the parsed action, or an invalid answer with its reason. */
export function uiAnswer(text: string): PolicyAnswer {
  const given = text.length > GIVEN_MAX_CHARS ? text.slice(0, GIVEN_MAX_CHARS) : text;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { invalid: `ui_action is not JSON: ${coerceError(e).message.slice(0, 200)}`, given };
  }
  const parsed = parseUiAction(value);
  if ("invalid" in parsed) return { invalid: parsed.invalid, given };
  return { action: parsed, given };
}

function touchOf(values: Map<string, number[] | string>): Action {
  const num = (uid: number) => {
    const v = values.get(String(uid));
    return Array.isArray(v) ? v : undefined;
  };
  const type = num(ACT.action_type)?.[0];
  if (type === undefined) throw invalid(`Step: action ${ACT.action_type} (action_type) is required, or action ${UI} (ui_action)`);
  const actionType = ACTION_TYPES[type];
  if (!Number.isInteger(type) || !actionType) throw invalid(`Step: action_type must be 0 (TOUCH), 1 (LIFT) or 2 (REPEAT), got ${type}`);
  const xy = num(ACT.touch_position);
  if (!xy) {
    if (actionType === "TOUCH") throw invalid(`Step: action ${ACT.touch_position} (touch_position) is required for TOUCH`);
    return { actionType, touchPosition: [0, 0] };
  }
  return { actionType, touchPosition: [xy[0]!, xy[1]!] };
}
