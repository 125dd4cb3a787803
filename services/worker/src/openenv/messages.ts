/**
 * OpenEnv's wire protocol as this worker serves it (meta-pytorch/OpenEnv 0.2.x, `openenv.core.env_server`): the
 * WebSocket messages of `/ws`, their error codes, and what the farm reads from a reset's and a step's `data`.
 * Written here from the protocol; nothing of OpenEnv's code is used.
 *
 *   client → server   {"type": "reset", "data": {...}}   {"type": "step", "data": {action}}   {"type": "state"}   {"type": "close"}
 *   server → client   {"type": "observation", "data": {"observation": {...}, "reward": r|null, "done": bool}}
 *                     {"type": "state", "data": {"episode_id": ..., "step_count": n, ...}}
 *                     {"type": "error", "data": {"message": "...", "code": "<WSErrorCode>", ...}}
 *
 * A reset's data (OpenEnv's ResetRequest: `seed`, `episode_id`, and the environment's own keys):
 *   task (string: a task or family id this worker loaded; required unless the worker has --openenv-task)   seed (int ≥ 0)   episode_id (string ≤ 255)
 *   params (object: a family's fixed parameters)   goal (string ≤ 2000)   max_episode_steps (int)   max_episode_sec (number)
 *   screenshot ("png" | "jpeg[:Q]" | "webp[:Q]", optionally "@WxH"; or "none"; default "png")   elements (bool, default true)
 * A step's data is the action (OpenEnv's Action: its fields plus an optional `metadata` object, ignored here):
 *   an AndroidWorld JSON action {"action_type": "click", "index": 3} … (libs/policy ui-action.ts), or an AndroidEnv
 *   touch {"action_type": "TOUCH" | "LIFT" | "REPEAT", "touch_position": [x, y]} with x, y in [0, 1].
 */
import { FarmError } from "@farm/errors";
import { parseFrameSpec, type FrameSpec } from "@farm/frames";
import type { EpisodeLimitOverrides } from "@farm/episode";
import { ACTION_TYPES, GIVEN_MAX_CHARS, type ActionType, type PolicyAnswer } from "@farm/policy";
import type { ParamValue, TaskParams } from "@farm/task";
import { uiAnswer } from "../remote-env/step-answer.ts";

/** OpenEnv's WSErrorCode values. */
export type WsErrorCode = "INVALID_JSON" | "UNKNOWN_TYPE" | "VALIDATION_ERROR" | "EXECUTION_ERROR" | "CAPACITY_REACHED" | "FACTORY_ERROR" | "SESSION_ERROR";

/** An error a message is answered with (`{"type": "error"}`); the session goes on unless the server says otherwise. */
export class OpenEnvError extends FarmError<"openenv_request"> {
  constructor(
    readonly wsCode: WsErrorCode,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super("openenv_request", message, { retryable: wsCode === "CAPACITY_REACHED" });
    this.name = "OpenEnvError";
  }
}

export const validation = (m: string) => new OpenEnvError("VALIDATION_ERROR", m);
export const execution = (m: string) => new OpenEnvError("EXECUTION_ERROR", m);

export type IncomingMessage = { type: "reset"; data: Record<string, unknown> } | { type: "step"; data: Record<string, unknown> } | { type: "state" } | { type: "close" };

const MESSAGE_KEYS: Record<IncomingMessage["type"], ReadonlySet<string>> = {
  reset: new Set(["type", "data"]),
  step: new Set(["type", "data"]),
  state: new Set(["type"]),
  close: new Set(["type"]),
};

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** One text frame as a message (OpenEnv's messages forbid extra keys); what is wrong is an OpenEnvError. */
export function parseMessage(text: string): IncomingMessage {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new OpenEnvError("INVALID_JSON", `Invalid JSON: ${e instanceof Error ? e.message.slice(0, 200) : "parse error"}`);
  }
  if (!isObject(v)) throw validation("a message is a JSON object with a 'type'");
  const type = v.type;
  if (type !== "reset" && type !== "step" && type !== "state" && type !== "close") {
    throw new OpenEnvError("UNKNOWN_TYPE", `Unknown message type: ${JSON.stringify(typeof type === "string" ? type.slice(0, 64) : type ?? "")}; this server takes reset, step, state and close`);
  }
  const extra = Object.keys(v).filter((k) => !MESSAGE_KEYS[type].has(k));
  if (extra.length > 0) throw validation(`message '${type}': unknown field(s) ${extra.slice(0, 5).map((k) => JSON.stringify(k.slice(0, 64))).join(", ")}`);
  if (type === "state" || type === "close") return { type };
  const data = v.data ?? (type === "reset" ? {} : undefined);
  if (!isObject(data)) throw validation(`message '${type}': field 'data' must be an object${type === "step" ? " (the action)" : ""}`);
  return { type, data };
}

export interface ResetRequest {
  taskId: string;
  seed: number | undefined;
  /** The client's own name for the episode (OpenEnv's `episode_id`). */
  episodeId: string | undefined;
  params: TaskParams | undefined;
  goal: string | undefined;
  limits: EpisodeLimitOverrides;
  /** undefined: no screenshot in observations. */
  screenshot: FrameSpec | undefined;
  elements: boolean;
}

const RESET_KEYS = ["task", "seed", "episode_id", "params", "goal", "max_episode_steps", "max_episode_sec", "screenshot", "elements"];
const RESET_KEY_SET = new Set(RESET_KEYS);
const MAX_PARAMS = 64;
const MAX_PARAM_CHARS = 2000;
const MAX_GOAL_CHARS = 2000;

function intField(d: Record<string, unknown>, name: string, min: number, max: number): number | undefined {
  const v = d[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min || v > max) throw validation(`reset: field '${name}' must be an integer in ${min}..${max}, got ${JSON.stringify(v)?.slice(0, 40)}`);
  return v;
}

function paramsField(v: unknown): TaskParams | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw validation("reset: field 'params' must be an object of parameter values");
  const names = Object.keys(v);
  if (names.length > MAX_PARAMS) throw validation(`reset: field 'params' has ${names.length} entries; at most ${MAX_PARAMS}`);
  const out: [string, ParamValue][] = [];
  for (const n of names) {
    const x = v[n];
    const ok = (typeof x === "string" && x.length <= MAX_PARAM_CHARS) || (typeof x === "number" && Number.isFinite(x)) || typeof x === "boolean";
    if (!ok) throw validation(`reset: params.${n.slice(0, 64)} must be a string (≤ ${MAX_PARAM_CHARS} characters), a finite number or a boolean`);
    out.push([n, x as ParamValue]);
  }
  // fromEntries: a parameter named __proto__ stays an own key.
  return Object.fromEntries(out);
}

/** A reset's data, every field checked and every problem named with its field. */
export function parseReset(d: Record<string, unknown>, defaultTask: string | undefined): ResetRequest {
  const unknown = Object.keys(d).filter((k) => !RESET_KEY_SET.has(k));
  if (unknown.length > 0) throw validation(`reset: unknown field(s) ${unknown.slice(0, 5).map((k) => JSON.stringify(k.slice(0, 64))).join(", ")}; known: ${RESET_KEYS.join(", ")}`);
  const task = d.task ?? defaultTask;
  if (typeof task !== "string" || task === "" || task.length > 256) throw validation("reset: field 'task' (a task or family id this worker loaded, a string) is required (this worker has no default task: --openenv-task)");
  const episodeId = d.episode_id;
  if (episodeId !== undefined && episodeId !== null && (typeof episodeId !== "string" || episodeId.length > 255)) throw validation("reset: field 'episode_id' must be a string of at most 255 characters");
  const goal = d.goal;
  if (goal !== undefined && goal !== null && (typeof goal !== "string" || goal.length > MAX_GOAL_CHARS || goal.trim() === "")) throw validation(`reset: field 'goal' must be non-empty text of at most ${MAX_GOAL_CHARS} characters`);
  const limits: EpisodeLimitOverrides = {};
  const steps = intField(d, "max_episode_steps", 1, 1_000_000);
  if (steps !== undefined) limits.maxEpisodeSteps = steps;
  const sec = d.max_episode_sec;
  if (sec !== undefined && sec !== null) {
    if (typeof sec !== "number" || !Number.isFinite(sec) || sec <= 0 || sec > 86_400) throw validation("reset: field 'max_episode_sec' must be a number in (0, 86400]");
    limits.maxEpisodeSec = sec;
  }
  let screenshot: FrameSpec | undefined = { format: "png" };
  const shot = d.screenshot;
  if (shot !== undefined && shot !== null) {
    if (typeof shot !== "string" || shot.length > 64) throw validation("reset: field 'screenshot' must be 'none' or a frame encoding such as 'png', 'jpeg:80' or 'webp:80@540x960'");
    if (shot === "none") screenshot = undefined;
    else {
      const spec = parseFrameSpec(shot);
      if (typeof spec === "string") throw validation(`reset: field 'screenshot': ${spec}`);
      screenshot = spec;
    }
  }
  const elements = d.elements ?? true;
  if (typeof elements !== "boolean") throw validation("reset: field 'elements' must be true or false");
  return {
    taskId: task,
    seed: intField(d, "seed", 0, 2 ** 31 - 1),
    episodeId: typeof episodeId === "string" ? episodeId : undefined,
    params: paramsField(d.params),
    goal: typeof goal === "string" ? goal : undefined,
    limits,
    screenshot,
    elements,
  };
}

const TOUCH_KEYS = new Set(["action_type", "touch_position", "metadata"]);

/**
 * A step's action as the answer the episode loop reads: a touch, or a UI action (an invalid UI action is still an
 * answer: the loop records the step as invalid and the episode goes on, as for any policy). Refused before the step
 * (VALIDATION_ERROR): a missing `action_type`, a bad touch, a `metadata` that is not an object.
 */
export function parseAction(d: Record<string, unknown>): PolicyAnswer {
  const { metadata, ...action } = d;
  if (metadata !== undefined && !isObject(metadata)) throw validation("step: field 'metadata' must be an object");
  const type = action.action_type;
  if (typeof type !== "string") throw validation("step: the action needs 'action_type': an AndroidWorld action type (click, input_text, scroll, …) or TOUCH / LIFT / REPEAT");
  if ((ACTION_TYPES as readonly string[]).includes(type)) {
    const extra = Object.keys(d).filter((k) => !TOUCH_KEYS.has(k));
    if (extra.length > 0) throw validation(`step: a ${type} action takes only touch_position; unknown field(s) ${extra.slice(0, 5).map((k) => JSON.stringify(k.slice(0, 64))).join(", ")}`);
    const p = action.touch_position;
    if (p === undefined && type !== "TOUCH") return { actionType: type as ActionType, touchPosition: [0, 0] };
    if (!Array.isArray(p) || p.length !== 2 || !p.every((n) => typeof n === "number" && Number.isFinite(n) && n >= 0 && n <= 1)) {
      throw validation("step: touch_position must be [x, y] with x and y in [0, 1]");
    }
    return { actionType: type as ActionType, touchPosition: [p[0] as number, p[1] as number] };
  }
  const text = JSON.stringify(action);
  if (text.length > GIVEN_MAX_CHARS * 4) throw validation(`step: the action is ${text.length} characters of JSON; at most ${GIVEN_MAX_CHARS * 4}`);
  return uiAnswer(text);
}
