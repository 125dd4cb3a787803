/** The JSON schemas `GET /schema` answers (OpenEnv's SchemaResponse: action, observation, state), for the farm's device environments. */
import { ACTION_TYPES as TOUCH_TYPES } from "@farm/policy";

/** AndroidWorld's action types (json_action.py), as libs/policy ui-action.ts reads them. */
const UI_TYPES = ["click", "double_tap", "long_press", "input_text", "keyboard_enter", "navigate_home", "navigate_back", "scroll", "swipe", "open_app", "wait", "status", "answer", "unknown"];
const ACTION_TYPES = { ui: UI_TYPES, touch: [...TOUCH_TYPES] };
const UI_TEXT_MAX_CHARS_FOR_SCHEMA = 2000;

const num01 = { type: "number", minimum: 0, maximum: 1 };

export function openEnvSchemas(): { action: object; observation: object; state: object } {
  const uiAction = {
    title: "AndroidWorldAction",
    type: "object",
    description: "AndroidWorld's JSON action; click/double_tap/long_press take index (into the observation's elements) or x, y (screen pixels)",
    properties: {
      action_type: { type: "string", enum: ACTION_TYPES.ui },
      index: { type: "integer", minimum: 0 },
      x: { type: "number" },
      y: { type: "number" },
      text: { type: "string", maxLength: UI_TEXT_MAX_CHARS_FOR_SCHEMA },
      direction: { type: "string", enum: ["up", "down", "left", "right"] },
      goal_status: { type: "string", enum: ["complete", "infeasible"] },
      app_name: { type: "string" },
      keycode: { type: "string" },
      clear_text: { type: "boolean" },
      metadata: { type: "object" },
    },
    required: ["action_type"],
    additionalProperties: false,
  };
  const touch = {
    title: "AndroidEnvTouch",
    type: "object",
    description: "AndroidEnv's touch action: a finger at touch_position (x, y in [0, 1]) or lifted",
    properties: { action_type: { type: "string", enum: ACTION_TYPES.touch }, touch_position: { type: "array", items: num01, minItems: 2, maxItems: 2 }, metadata: { type: "object" } },
    required: ["action_type"],
    additionalProperties: false,
  };
  const nullable = (s: object) => ({ anyOf: [s, { type: "null" }] });
  const observation = {
    title: "FarmDeviceObservation",
    type: "object",
    properties: {
      goal: { type: "string" },
      screenshot: nullable({ type: "object", properties: { format: { type: "string", enum: ["png", "jpeg", "webp"] }, width: { type: "integer" }, height: { type: "integer" }, data: { type: "string", contentEncoding: "base64" } } }),
      elements: nullable({ type: "array", items: { type: "object", description: "AndroidWorld's UIElement: index, text, content_description, resource_id, class_name, bounds [l, t, r, b], is_clickable, …" } }),
      screen: nullable({ type: "object", properties: { width: { type: "integer" }, height: { type: "integer" } } }),
      orientation: { type: "integer", minimum: 0, maximum: 3 },
      step_index: { type: "integer", minimum: 0 },
      task_id: nullable({ type: "string" }),
      episode_id: nullable({ type: "string" }),
      last_action: nullable({ type: "object", description: "what became of the previous action: given, action, resolved, invalid" }),
      extras: { type: "object" },
      outcome: nullable({ type: "string", enum: ["terminated", "truncated"] }),
      cause: nullable({ type: "string" }),
      success: nullable({ type: "number", minimum: 0, maximum: 1 }),
      params: nullable({ type: "object" }),
      checks: nullable({ type: "array" }),
      score_error: nullable({ type: "string" }),
      done: { type: "boolean", default: false },
      reward: nullable({ type: "number" }),
    },
  };
  const state = {
    title: "FarmDeviceState",
    type: "object",
    properties: {
      episode_id: nullable({ type: "string" }),
      step_count: { type: "integer", minimum: 0, default: 0 },
      session_id: { type: "string" },
      farm_episode_id: nullable({ type: "string", description: "the committed trajectory's episode id" }),
      device: { type: "string" },
      task_id: nullable({ type: "string" }),
      goal: { type: "string" },
      seed: nullable({ type: "integer" }),
      done: { type: "boolean" },
      total_reward: { type: "number" },
      episodes: { type: "integer" },
    },
    additionalProperties: true,
  };
  return { action: { title: "FarmDeviceAction", anyOf: [uiAction, touch] }, observation, state };
}
