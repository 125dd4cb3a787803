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
  /** A list of Hugging Face Images (Sequence(Image)): list<struct<bytes, path>>. */
  | { kind: "images" }
  /** Milliseconds since the epoch, UTC. */
  | { kind: "timestamp" }
  /** A list of records with these scalar fields (Arrow list<struct>; Hugging Face `[{…}]`). */
  | { kind: "structs"; fields: readonly { name: string; element: ElementType }[] };

export interface ColumnDef {
  name: string;
  type: ColumnType;
  doc: string;
}

const v = (element: ElementType): ColumnType => ({ kind: "value", element });

/** Issue 41: an episode's task instance score, in `episodes` and in the episodes-nested layout. */
/** Issue 36 (schema v5): how long each step waited for the screen to settle after its action. */
const SETTLE_STEP_COLUMNS: readonly ColumnDef[] = [
  { name: "settle_ms", type: v("float64"), doc: "milliseconds the step waited for the screen to settle after its action, before its observation (the episode's `settle` policy); null without a settle policy (before v5, or `none`)" },
  { name: "settle_capped", type: v("bool"), doc: "the settle policy gave up at its cap (the screen never settled; the observation was taken anyway)" },
];
const SETTLE_EPISODE_COLUMN: ColumnDef = { name: "settle", type: v("string"), doc: "the settle policy the steps observed with (none, fixed:MS, androidworld:…, events:quiet=MS,cap=MS, frames:…); null when the campaign set none (before v5, or no --settle)" };

const SCORE_COLUMNS: readonly ColumnDef[] = [
  { name: "success", type: v("float64"), doc: "0..1 from the task instance's final score (a family's checks combined, or a task server's); null without one or when the score was an error (`score_error`)" },
  { name: "params", type: v("string"), doc: "the task instance's parameters as a JSON object (drawn from the seed or fixed by the campaign); null without an instance" },
  {
    name: "checks",
    type: { kind: "structs", fields: [{ name: "name", element: "string" }, { name: "kind", element: "string" }, { name: "passed", element: "bool" }, { name: "observed", element: "string" }, { name: "expected", element: "string" }, { name: "error", element: "string" }] },
    doc: "each check of the final score: name, kind (its source: shell, setting, file, sql, tree, activity, answer, remote), passed, observed (what was read, ≤ 1024 characters), expected (the comparison rendered), error (why it could not run; null when it ran); [] without checks",
  },
  { name: "score_error", type: v("string"), doc: "why the final score could not be computed (a check that could not run, a task server that failed); then `success` is null, never a silent 0" },
];

/** Issue 38: an episode's policy versions and staleness, in `episodes` and in the episodes-nested layout. */
const VERSION_COLUMNS: readonly ColumnDef[] = [
  { name: "first_policy_version", type: v("string"), doc: "the policy version of the first step that reported one (a learner's weights: the model server's X-Policy-Version, the model name it answered with, a policy's `version`); null when none did" },
  { name: "last_policy_version", type: v("string"), doc: "the policy version of the last step that reported one; null when none did" },
  { name: "stale", type: v("string"), doc: "why the episode is too stale for a learner (its steps' versions span, or lag the campaign's current version by, more than the campaign's max staleness); null when it is not (or no max staleness was set)" },
];

/** Issue 38: GRPO-style groups (the task instance an episode belongs to), in `episodes`; the `groups` view sums them up. */
const GROUP_COLUMNS: readonly ColumnDef[] = [
  { name: "group_index", type: v("int64"), doc: "the episode's group: its task instance in the campaign (members share seed, params, goal); null outside grouped campaigns" },
  { name: "group_member", type: v("int32"), doc: "the episode's member index in its group (0 … group_size − 1); null outside grouped campaigns" },
  { name: "group_size", type: v("int32"), doc: "runs per task instance (K); null outside grouped campaigns" },
];

/**
 * How the data table (`data/`) is laid out: `steps`, one row per step (RL and per-step SFT), or
 * `episodes-nested`, one row per episode with its steps as parallel lists (AndroidControl-style loaders).
 */
export type DatasetLayout = "steps" | "episodes-nested";
export const DATASET_LAYOUTS: readonly DatasetLayout[] = ["steps", "episodes-nested"];

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
  { name: "goal", type: v("string"), doc: "the episode's goal text (repeated on every step, as GUI-agent data sets do); null before schema v3" },
  {
    name: "action_json",
    type: v("string"),
    doc: "the action: the AndroidWorld JSON action read from the policy's answer (compact JSON); the answer as given when it held no valid action (a model's whole text); for AndroidEnv touches {\"action_type\":\"TOUCH\"|\"LIFT\"|\"REPEAT\",\"touch_position\":[x,y]}",
  },
  { name: "action_resolved", type: v("string"), doc: "what a UI action did on the device as JSON (op, x, y, element, text, key, app, …); null for touches and invalid answers" },
  { name: "action_invalid", type: v("string"), doc: "why the answer was invalid (it was recorded, nothing was done); null otherwise" },
  {
    name: "elements",
    type: v("string"),
    doc: "the UI element list the action was chosen on (BEFORE the action: the previous step's recorded screen, the initial one for step 1), JSON array of {index, class_name, text, content_description, hint_text, resource_id, package_name, bounds [l,t,r,b] px, is_*}; null when not recorded for that screen",
  },
  { name: "a11y_tree", type: v("string"), doc: "the accessibility tree of the same screen as `elements`, compact versioned JSON ({\"v\":1,…}); null when not recorded" },
  { name: "policy_version", type: v("string"), doc: "the policy version that chose this step's answer (issue 38); null when the policy reported none (the episode's static version is `episodes.policy_version`)" },
  { name: "policy_ms", type: v("float64"), doc: "how long the policy took to answer this step (ms, around act()); null before schema v5" },
  ...SETTLE_STEP_COLUMNS,
];

/** The screen the step's action was chosen on (BEFORE it): each recorded frame appears once in the data set. */
export const SCREENSHOT_COLUMN: ColumnDef = {
  name: "screenshot",
  type: { kind: "image" },
  doc: "the screen the action was chosen on (BEFORE the action: the previous step's recorded frame, the episode's initial frame for step 1), PNG unless the episode's frame encoding says otherwise (Hugging Face Image); null when that screen's frame was not kept. The screen after the last step is `final_screenshot` in `episodes`",
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
  return [...STEP_COLUMNS_HEAD, ...extras.map(extraColumnDef), SCREENSHOT_COLUMN];
}

/** The config (and `query` view) name of `data/`: `steps`, or `trajectories` for the nested layout. */
export function dataConfigName(layout: DatasetLayout): "steps" | "trajectories" {
  return layout === "steps" ? "steps" : "trajectories";
}

/** The columns of `data/` in a layout (the nested layout leaves extras to the steps layout). */
export function dataColumns(layout: DatasetLayout, extras: readonly ExtraColumn[]): readonly ColumnDef[] {
  return layout === "steps" ? stepColumns(extras) : NESTED_COLUMNS;
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
  { name: "reset_kind", type: v("string"), doc: "how the device was reset: steps, snapshot, start_snapshot or snapshot_fallback" },
  { name: "counters_json", type: v("string"), doc: "counted problems of the episode as a JSON object" },
  { name: "goal", type: v("string"), doc: "the episode's goal text; null before schema v3" },
  { name: "agent_status", type: v("string"), doc: "what the agent declared with a status action (complete, infeasible); null when it did not. `episode_return` still says whether the task succeeded" },
  { name: "answer", type: v("string"), doc: "the agent's answer text (the last one); null when it gave none" },
  { name: "invalid_actions", type: v("int32"), doc: "answers recorded as invalid" },
  { name: "a11y_every", type: v("int32"), doc: "the screen was recorded as a tree on steps whose index is a multiple; 0 = never" },
  SETTLE_EPISODE_COLUMN,
  { name: "final_screenshot", type: { kind: "image" }, doc: "the screen after the last step (Hugging Face Image); null when its frame was not kept, and in the episodes-nested layout (the last item of `screenshots`)" },
  { name: "final_elements", type: v("string"), doc: "the element list of the screen after the last step (JSON array, as `elements`); null when not recorded, and in the episodes-nested layout" },
  { name: "final_a11y_tree", type: v("string"), doc: "the tree of the screen after the last step (compact JSON); null when not recorded, and in the episodes-nested layout" },
  ...SCORE_COLUMNS,
  ...VERSION_COLUMNS,
  ...GROUP_COLUMNS,
];

/** `--layout episodes-nested`: one row per episode, its steps as parallel lists (AndroidControl's shape). */
export const NESTED_COLUMNS: readonly ColumnDef[] = [
  { name: "episode_id", type: v("string"), doc: "episode id (`<campaign>-<index>`), the key into `episodes`" },
  { name: "task_id", type: v("string"), doc: "task id" },
  { name: "policy_name", type: v("string"), doc: "policy" },
  { name: "goal", type: v("string"), doc: "the episode's goal text; null before schema v3" },
  { name: "outcome", type: v("string"), doc: "terminated or truncated" },
  { name: "cause", type: v("string"), doc: "why it ended (episode_end, agent_status, step_limit, …)" },
  { name: "episode_return", type: v("float64"), doc: "total reward (whether the task succeeded)" },
  { name: "agent_status", type: v("string"), doc: "what the agent declared with a status action (complete, infeasible); null when it did not" },
  { name: "answer", type: v("string"), doc: "the agent's answer text; null when it gave none" },
  { name: "invalid_actions", type: v("int32"), doc: "answers recorded as invalid" },
  { name: "step_count", type: v("int32"), doc: "number of actions N" },
  {
    name: "screenshots",
    type: { kind: "images" },
    doc: "N + 1 screens: screenshots[i] is the screen actions[i] was chosen on (the initial screen for i = 0), the last one the screen after the last action (Hugging Face Sequence(Image)); an item is null when that screen's frame was not kept",
  },
  { name: "elements", type: { kind: "list", rank: 1, element: "string" }, doc: "N + 1 UI element lists (JSON), aligned with `screenshots`; an item is null when not recorded" },
  { name: "accessibility_trees", type: { kind: "list", rank: 1, element: "string" }, doc: "N + 1 accessibility trees (compact versioned JSON), aligned with `screenshots`; an item is null when not recorded" },
  {
    name: "actions",
    type: { kind: "list", rank: 1, element: "string" },
    doc: "N answers as given: the policy's JSON (an AndroidWorld JSON action, or what it sent when invalid); for AndroidEnv touches {\"action_type\":\"TOUCH\"|\"LIFT\"|\"REPEAT\",\"touch_position\":[x,y]}",
  },
  { name: "actions_resolved", type: { kind: "list", rank: 1, element: "string" }, doc: "N: what each UI action did on the device (JSON); null items for touches and invalid answers" },
  { name: "actions_invalid", type: { kind: "list", rank: 1, element: "string" }, doc: "N: why each answer was invalid; null items otherwise" },
  { name: "rewards", type: { kind: "list", rank: 1, element: "float64" }, doc: "N rewards, one per action" },
  SETTLE_EPISODE_COLUMN,
  { name: "settle_ms", type: { kind: "list", rank: 1, element: "float64" }, doc: "N: milliseconds each step waited for the screen to settle after its action; null items without a settle policy" },
  { name: "settle_capped", type: { kind: "list", rank: 1, element: "bool" }, doc: "N: whether each step's settle policy gave up at its cap" },
  ...SCORE_COLUMNS,
  { name: "policy_versions", type: { kind: "list", rank: 1, element: "string" }, doc: "N: the policy version that chose each action; null items where the policy reported none" },
  { name: "policy_ms", type: { kind: "list", rank: 1, element: "float64" }, doc: "N: how long the policy took to answer each action (ms); null items before schema v5" },
  ...VERSION_COLUMNS,
];

export { columnFor };

/**
 * The `groups` view (issue 38) over `episodes`: one row per group of a grouped campaign — members, mean and population
 * std of their returns, whether all are equal (uniform: no GRPO signal) and whether the group is complete. Data sets
 * exported before groups have no group columns: then there is no such view.
 */
export const GROUPS_VIEW_SQL = `CREATE VIEW groups AS SELECT campaign_id, group_index, any_value(group_size) AS group_size,
  count(DISTINCT episode_id) AS members, avg(episode_return) AS reward_mean, stddev_pop(episode_return) AS reward_std,
  min(episode_return) = max(episode_return) AS uniform, count(DISTINCT episode_id) >= any_value(group_size) AS complete
  FROM episodes WHERE group_index IS NOT NULL GROUP BY campaign_id, group_index`;
