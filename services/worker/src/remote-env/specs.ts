/**
 * AndroidEnv's specs on the wire and one observation as tensors. Ids are fixed for the built-in
 * observations and actions; the task's extras follow in extras_spec order (see libs/dm-env-rpc/README.md).
 */
import { DataType, grpc, tensor, type ActionObservationSpecs, type DataTypeValue, type Tensor, type TensorSpec } from "@farm/dm-env-rpc";
import type { Observation, Pixels } from "@farm/policy";
import type { ArraySpec, Task } from "@farm/task";
import { EnvError } from "./env-error.ts";
import { agentObservationSpecs, agentObservationTensors, MAX_EXTRAS, UI_ACTION_ID, uiActionSpec } from "./agent-specs.ts";

export const OBS = { pixels: 1, timedelta: 2, orientation: 3, reward: 4, discount: 5 } as const;
export const FIRST_EXTRA_ID = 6;
export const ACT = { action_type: 1, touch_position: 2, ui_action: UI_ACTION_ID } as const;

const EXTRA_DTYPE: Partial<Record<ArraySpec["dtype"], DataTypeValue>> = {
  FLOAT: DataType.FLOAT, DOUBLE: DataType.DOUBLE, INT8: DataType.INT8, INT16: DataType.INT32, INT32: DataType.INT32, INT64: DataType.INT64,
  UINT8: DataType.UINT8, UINT16: DataType.UINT32, UINT32: DataType.UINT32, UINT64: DataType.UINT64, BOOL: DataType.BOOL,
};
const extraDtype = (d: ArraySpec["dtype"]): DataTypeValue => EXTRA_DTYPE[d] ?? DataType.STRING;

const spec = (name: string, dtype: DataTypeValue, shape: number[], extra: Partial<TensorSpec> = {}): TensorSpec => ({ name, dtype, shape, ...extra });

/** The world's specs: pixels [H, W, 3] at the world's frame size; the agent observations (agent-specs.ts) last. */
export function worldSpecs(task: Task, frame: { height: number; width: number }): ActionObservationSpecs {
  if (task.extrasSpec.length > MAX_EXTRAS) throw new EnvError(grpc.status.FAILED_PRECONDITION, `task ${task.id} declares ${task.extrasSpec.length} extras; remote worlds serve at most ${MAX_EXTRAS}`);
  const observations: Record<string, TensorSpec> = {
    [OBS.pixels]: spec("pixels", DataType.UINT8, [frame.height, frame.width, 3]),
    [OBS.timedelta]: spec("timedelta", DataType.INT64, []),
    [OBS.orientation]: spec("orientation", DataType.UINT8, [4]),
    [OBS.reward]: spec("reward", DataType.DOUBLE, []),
    [OBS.discount]: spec("discount", DataType.DOUBLE, []),
  };
  task.extrasSpec.forEach((e, i) => (observations[FIRST_EXTRA_ID + i] = spec(e.name, extraDtype(e.dtype), e.shape)));
  Object.assign(observations, agentObservationSpecs());
  const actions: Record<string, TensorSpec> = {
    [ACT.action_type]: spec("action_type", DataType.INT32, [], { min: { int32s: { array: [0] } }, max: { int32s: { array: [2] } } }),
    [ACT.touch_position]: spec("touch_position", DataType.FLOAT, [2], { min: { floats: { array: [0, 0] } }, max: { floats: { array: [1, 1] } } }),
    [ACT.ui_action]: uiActionSpec(),
  };
  return { actions, observations };
}

/** Nearest-neighbour resize of RGB pixels to the world's frame size (a copy-free pass when the sizes agree). */
export function fitPixels(p: Pixels, frame: { height: number; width: number }): Uint8Array {
  if (p.width === frame.width && p.height === frame.height) return p.rgb;
  const out = new Uint8Array(frame.width * frame.height * 3);
  for (let y = 0; y < frame.height; y++) {
    const sy = Math.min(p.height - 1, Math.floor((y * p.height) / frame.height));
    for (let x = 0; x < frame.width; x++) {
      const sx = Math.min(p.width - 1, Math.floor((x * p.width) / frame.width));
      const s = (sy * p.width + sx) * 3;
      const d = (y * frame.width + x) * 3;
      out[d] = p.rgb[s]!;
      out[d + 1] = p.rgb[s + 1]!;
      out[d + 2] = p.rgb[s + 2]!;
    }
  }
  return out;
}

const flat = (v: unknown): unknown[] => (Array.isArray(v) ? v.flatMap(flat) : [v]);

/** The last value of an extra logged this step, as a tensor of its spec (strings for STRING/OBJECT dtypes). */
function extraTensor(e: ArraySpec, values: { value: unknown; shape: number[] }[]): Tensor | undefined {
  const last = values[values.length - 1];
  if (!last) return undefined;
  const dtype = extraDtype(e.dtype);
  const items = flat(last.value);
  if (dtype === DataType.STRING) return tensor(dtype, items.map((x) => (typeof x === "string" ? x : JSON.stringify(x))), last.shape);
  if (dtype === DataType.BOOL) return tensor(dtype, items.map(Boolean), last.shape);
  return tensor(dtype, items.map(Number), last.shape);
}

export interface StepFacts {
  obs: Observation;
  reward: number;
  discount: number;
  frame: { height: number; width: number };
  /** The compact tree read for this observation, when it was recorded (a11y_every). */
  a11yTree?: string;
}

/**
 * The spec's default value of an extra the app has not logged (yet): the dtype's zero ("" for strings,
 * false for bools) at the spec's shape, as dm_env's `Array.generate_value()` and proto3 defaults have it;
 * a variable (negative) dimension is empty.
 */
export function defaultExtraTensor(e: ArraySpec): Tensor {
  const dtype = extraDtype(e.dtype);
  const shape = e.shape.map((d) => Math.max(0, d));
  const n = shape.reduce((a, d) => a * d, 1);
  if (dtype === DataType.STRING) return tensor(dtype, new Array<string>(n).fill(""), shape);
  if (dtype === DataType.BOOL) return tensor(dtype, new Array<boolean>(n).fill(false), shape);
  return tensor(dtype, new Array<number>(n).fill(0), shape);
}

/**
 * Exactly the requested observations (none when the request names none, as dm_env_rpc's StepRequest says),
 * each of them: an extra not logged this step has its spec's default value.
 */
export function observationTensors(task: Task, f: StepFacts, requested: ReadonlySet<number>): Record<string, Tensor> {
  const out: Record<string, Tensor> = {};
  if (requested.size === 0) return out;
  if (requested.has(OBS.pixels)) {
    if (!f.obs.pixels) throw new EnvError(grpc.status.UNAVAILABLE, "Step: the device gave no screen for this observation (pixels); step again");
    out[OBS.pixels] = tensor(DataType.UINT8, fitPixels(f.obs.pixels, f.frame), [f.frame.height, f.frame.width, 3]);
  }
  if (requested.has(OBS.timedelta)) out[OBS.timedelta] = tensor(DataType.INT64, [f.obs.timedeltaUs]);
  if (requested.has(OBS.orientation)) out[OBS.orientation] = tensor(DataType.UINT8, [0, 1, 2, 3].map((i) => (i === f.obs.orientation ? 1 : 0)), [4]);
  if (requested.has(OBS.reward)) out[OBS.reward] = tensor(DataType.DOUBLE, [f.reward]);
  if (requested.has(OBS.discount)) out[OBS.discount] = tensor(DataType.DOUBLE, [f.discount]);
  task.extrasSpec.forEach((e, i) => {
    const id = FIRST_EXTRA_ID + i;
    if (!requested.has(id)) return;
    const values = Object.hasOwn(f.obs.extras, e.name) ? f.obs.extras[e.name] : undefined;
    out[id] = (values && extraTensor(e, values)) ?? defaultExtraTensor(e);
  });
  return Object.assign(out, agentObservationTensors(f.obs, f.a11yTree, requested));
}
