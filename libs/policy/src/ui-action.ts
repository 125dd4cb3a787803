/**
 * GUI-agent actions: AndroidWorld's JSON action (android_world/env/json_action.py), its keys and action types as
 * there, so an agent written for AndroidWorld answers the farm unchanged. `x`, `y` are screen pixels; `index`
 * points into the element list of the observation the action was chosen on (Observation.elements).
 */

export const UI_ACTION_TYPES = [
  "click",
  "double_tap",
  "long_press",
  "input_text",
  "keyboard_enter",
  "navigate_home",
  "navigate_back",
  "scroll",
  "swipe",
  "open_app",
  "wait",
  "status",
  "answer",
  "unknown",
] as const;
export type UiActionType = (typeof UI_ACTION_TYPES)[number];

export const SCROLL_DIRECTIONS = ["up", "down", "left", "right"] as const;
export type ScrollDirection = (typeof SCROLL_DIRECTIONS)[number];

export const GOAL_STATUSES = ["complete", "infeasible"] as const;
export type GoalStatus = (typeof GOAL_STATUSES)[number];

export interface UiAction {
  action_type: UiActionType;
  index?: number;
  x?: number;
  y?: number;
  text?: string;
  direction?: ScrollDirection;
  goal_status?: GoalStatus;
  app_name?: string;
  clear_text?: boolean;
}

/** Longest text an input_text or answer may carry (a bound on what reaches the device and the record). */
export const UI_TEXT_MAX_CHARS = 2000;

/** AndroidWorld's keys. `keycode` is accepted (a string) and dropped: no action type of the list uses it. */
const KEYS = new Set(["action_type", "index", "x", "y", "text", "direction", "goal_status", "app_name", "keycode", "clear_text"]);
const POINTED = new Set<UiActionType>(["click", "double_tap", "long_press"]);

/** True when the value is meant as a UI action (it carries `action_type`), valid or not. */
export function looksLikeUiAction(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && Object.hasOwn(value, "action_type");
}

/**
 * Checks an untrusted UI action and returns a fresh one, or the reason it is invalid (never throws): an unknown
 * type or key, a missing or ill-typed field. Whether an index or app exists is decided later, on the device's screen.
 */
export function parseUiAction(value: unknown): UiAction | { invalid: string } {
  if (!looksLikeUiAction(value)) return { invalid: "not a JSON object with an action_type" };
  const type = value.action_type;
  if (typeof type !== "string" || !(UI_ACTION_TYPES as readonly string[]).includes(type)) {
    return { invalid: `action_type must be one of ${UI_ACTION_TYPES.join(", ")}` };
  }
  if (type === "unknown") return { invalid: "the policy answered action_type unknown" };
  for (const k of Object.keys(value)) if (!KEYS.has(k)) return { invalid: `unknown key '${k.slice(0, 40)}'` };
  const out: UiAction = { action_type: type as UiActionType };
  const problem = copyFields(value, out);
  if (problem) return { invalid: problem };
  return requiredFields(out) ?? out;
}

function copyFields(v: Record<string, unknown>, out: UiAction): string | undefined {
  for (const k of ["index", "x", "y"] as const) {
    const n = v[k];
    if (n === undefined || n === null) continue;
    if (typeof n !== "number" || !Number.isInteger(n) || n < 0 || n > 100_000) return `${k} must be a whole number from 0 to 100000`;
    out[k] = n;
  }
  for (const k of ["text", "app_name", "keycode"] as const) {
    const s = v[k];
    if (s === undefined || s === null) continue;
    if (typeof s !== "string") return `${k} must be a string`;
    if (s.length > UI_TEXT_MAX_CHARS) return `${k} is longer than ${UI_TEXT_MAX_CHARS} characters`;
    if (k !== "keycode") out[k] = s;
  }
  if (v.direction !== undefined && v.direction !== null) {
    if (!(SCROLL_DIRECTIONS as readonly unknown[]).includes(v.direction)) return `direction must be one of ${SCROLL_DIRECTIONS.join(", ")}`;
    out.direction = v.direction as ScrollDirection;
  }
  if (v.goal_status !== undefined && v.goal_status !== null) {
    if (!(GOAL_STATUSES as readonly unknown[]).includes(v.goal_status)) return `goal_status must be one of ${GOAL_STATUSES.join(", ")}`;
    out.goal_status = v.goal_status as GoalStatus;
  }
  if (v.clear_text !== undefined && v.clear_text !== null) {
    if (typeof v.clear_text !== "boolean") return "clear_text must be true or false";
    out.clear_text = v.clear_text;
  }
  return undefined;
}

function requiredFields(a: UiAction): { invalid: string } | undefined {
  const t = a.action_type;
  const hasPoint = a.x !== undefined && a.y !== undefined;
  if (POINTED.has(t) && a.index === undefined && !hasPoint) return { invalid: `${t} needs an index or both x and y` };
  if ((a.x === undefined) !== (a.y === undefined)) return { invalid: "x and y go together" };
  if (t === "input_text" && a.text === undefined) return { invalid: "input_text needs text" };
  if (t === "answer" && a.text === undefined) return { invalid: "answer needs text" };
  if ((t === "scroll" || t === "swipe") && a.direction === undefined) return { invalid: `${t} needs a direction` };
  if (t === "open_app" && !a.app_name?.trim()) return { invalid: "open_app needs app_name" };
  if (t === "status" && a.goal_status === undefined) return { invalid: "status needs goal_status complete or infeasible" };
  return undefined;
}
