/**
 * The two tables of a data set, described once: the Arrow schema of the Parquet files, the Hugging Face
 * `features` of the card and the JSON features in the files' `huggingface` metadata all come from here,
 * so they cannot drift apart.
 */
import { columnFor, type ElementType, type ExtraColumn } from "./extras-spec.ts";

export type ColumnType =
  | { kind: "value"; element: ElementType }
  /** `rank` levels of list around `element` (1 = list<element>). */
  | { kind: "list"; rank: number; element: ElementType }
  /** Hugging Face Image: struct<bytes: binary, path: string>. */
  | { kind: "image" }
  /** Milliseconds since the epoch, UTC. */
  | { kind: "timestamp" };

export interface ColumnDef {
  name: string;
  type: ColumnType;
  doc: string;
}

const v = (element: ElementType): ColumnType => ({ kind: "value", element });

/** Fixed columns of the steps table before the extras. */
export const STEP_COLUMNS_HEAD: readonly ColumnDef[] = [
  { name: "episode_id", type: v("string"), doc: "episode id (`<campaign>-<index>`), the key into `episodes`" },
  { name: "step_index", type: v("int32"), doc: "1-based step index within the episode" },
  { name: "action_type", type: v("string"), doc: "AndroidEnv action type: TOUCH, LIFT or REPEAT" },
  { name: "touch_position", type: { kind: "list", rank: 1, element: "float64" }, doc: "[x, y] in [0, 1], relative to the screen" },
  { name: "reward", type: v("float64"), doc: "reward collected for this step" },
  { name: "discount", type: v("float64"), doc: "0 on the last step of a terminated episode, else 1 (dm_env semantics)" },
  { name: "is_first", type: v("bool"), doc: "first step of the episode" },
  { name: "is_last", type: v("bool"), doc: "last step of the episode (terminated or truncated)" },
  { name: "is_terminal", type: v("bool"), doc: "last step of an episode that terminated (not truncated)" },
  { name: "time_offset_ms", type: v("int64"), doc: "milliseconds since the end of the reset" },
  { name: "timedelta_ms", type: v("int64"), doc: "milliseconds since the previous step (the reset for the first)" },
];

export const FRAME_COLUMN: ColumnDef = {
  name: "frame",
  type: { kind: "image" },
  doc: "PNG of the observation after the action (Hugging Face Image); null on steps without a kept frame",
};

/** Extras: one more list level than the shape's rank, for the values logged during the step (log order). */
export function extraColumnDef(c: ExtraColumn): ColumnDef {
  return {
    name: c.column,
    type: { kind: "list", rank: c.rank + 1, element: c.element },
    doc: `extra '${c.name}' (${c.dtype}, rank ${c.rank}${c.element === "string" && c.dtype === "OBJECT" ? ", JSON text" : ""}): every value logged during the step`,
  };
}

export function stepColumns(extras: readonly ExtraColumn[]): ColumnDef[] {
  return [...STEP_COLUMNS_HEAD, ...extras.map(extraColumnDef), FRAME_COLUMN];
}

export const EPISODE_COLUMNS: readonly ColumnDef[] = [
  { name: "episode_id", type: v("string"), doc: "episode id, the key of the steps" },
  { name: "campaign_id", type: v("string"), doc: "campaign the episode belongs to" },
  { name: "episode_index", type: v("int64"), doc: "0-based index in the campaign" },
  { name: "attempt", type: v("int32"), doc: "1-based attempt of the episode job" },
  { name: "task_id", type: v("string"), doc: "task id" },
  { name: "task_hash", type: v("string"), doc: "hash of the normalised task" },
  { name: "task_dialect", type: v("string"), doc: "task file dialect, when known" },
  { name: "policy_name", type: v("string"), doc: "policy" },
  { name: "policy_version", type: v("string"), doc: "policy version" },
  { name: "seed", type: v("int64"), doc: "episode seed" },
  { name: "outcome", type: v("string"), doc: "terminated or truncated" },
  { name: "cause", type: v("string"), doc: "why it ended (episode_end, step_limit, …)" },
  { name: "cause_detail", type: v("string"), doc: "detail of the cause; may be empty" },
  { name: "episode_return", type: v("float64"), doc: "total reward" },
  { name: "step_count", type: v("int32"), doc: "number of steps (rows in `steps`)" },
  { name: "frame_every", type: v("int32"), doc: "frames kept on steps whose index is a multiple; 0 = none" },
  { name: "started_at", type: { kind: "timestamp" }, doc: "start (UTC)" },
  { name: "ended_at", type: { kind: "timestamp" }, doc: "end (UTC)" },
  { name: "duration_ms", type: v("int64"), doc: "ended_at − started_at" },
  { name: "device_serial", type: v("string"), doc: "ADB serial of the device" },
  { name: "worker", type: v("string"), doc: "worker that ran it" },
  { name: "reset_kind", type: v("string"), doc: "how the device was reset; null: the trajectory records do not carry it yet" },
  { name: "counters_json", type: v("string"), doc: "counted problems of the episode as a JSON object" },
];

export { columnFor };
