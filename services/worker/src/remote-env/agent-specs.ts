/**
 * The GUI-agent side of a world (issue 28): observations `goal`, `elements`, `a11y_tree`, `last_action_outcome`
 * and the `ui_action` action (an AndroidWorld JSON action as text). Their ids are fixed and far above the task's
 * extras (which start at 6 and follow `extras_spec`), so no task's extras can reach them.
 */
import { DataType, tensor, type Tensor, type TensorSpec } from "@farm/dm-env-rpc";
import type { Observation } from "@farm/policy";

export const AGENT_OBS = { goal: 1001, elements: 1002, a11y_tree: 1003, last_action_outcome: 1004 } as const;
export const UI_ACTION_ID = 3;
/** Most extras a task may declare before its ids would reach the agent observations. */
export const MAX_EXTRAS = AGENT_OBS.goal - 6;

const spec = (name: string, dtype: TensorSpec["dtype"], shape: number[]): TensorSpec => ({ name, dtype, shape });

/** Variable lengths are a negative dimension, as dm_env_rpc's TensorSpec has them. */
export function agentObservationSpecs(): Record<string, TensorSpec> {
  return {
    [AGENT_OBS.goal]: spec("goal", DataType.STRING, []),
    [AGENT_OBS.elements]: spec("elements", DataType.STRING, [-1]),
    [AGENT_OBS.a11y_tree]: spec("a11y_tree", DataType.UINT8, [-1]),
    [AGENT_OBS.last_action_outcome]: spec("last_action_outcome", DataType.STRING, []),
  };
}

export const uiActionSpec = (): TensorSpec => spec("ui_action", DataType.STRING, []);

/** Whether a Step's requested observations need the screen as elements (a tree read per step). */
export const wantsElements = (requested: ReadonlySet<number>): boolean => requested.has(AGENT_OBS.elements);

/**
 * The requested agent observations: `elements` one JSON object per element (none when no tree was read),
 * `a11y_tree` the compact tree JSON as UTF-8 bytes (empty when this observation did not read the tree),
 * `last_action_outcome` `observation.previous` as JSON ("" when there is none).
 */
export function agentObservationTensors(obs: Observation, tree: string | undefined, requested: ReadonlySet<number>): Record<string, Tensor> {
  const out: Record<string, Tensor> = {};
  if (requested.has(AGENT_OBS.goal)) out[AGENT_OBS.goal] = tensor(DataType.STRING, [obs.goal ?? ""]);
  if (requested.has(AGENT_OBS.elements)) {
    const els = (obs.elements ?? []).map((e) => JSON.stringify(e));
    out[AGENT_OBS.elements] = tensor(DataType.STRING, els, [els.length]);
  }
  if (requested.has(AGENT_OBS.a11y_tree)) {
    const bytes = Buffer.from(tree ?? "", "utf8");
    out[AGENT_OBS.a11y_tree] = tensor(DataType.UINT8, new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), [bytes.byteLength]);
  }
  if (requested.has(AGENT_OBS.last_action_outcome)) out[AGENT_OBS.last_action_outcome] = tensor(DataType.STRING, [obs.previous ? JSON.stringify(obs.previous) : ""]);
  return out;
}
