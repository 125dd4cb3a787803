/**
 * The Avro schema of the farm's trajectory files: one record per episode. Documented field by field
 * (the `doc` strings travel inside every file) and versioned; see ../SCHEMA.md for the evolution rules.
 * Evolve only by adding fields WITH a default (and bump SCHEMA_VERSION), so every older file stays
 * readable by newer readers and newer files by older readers.
 */
import type { schema as AvroSchema } from "avsc";

/** Bump on every change of `episodeSchema`; also stored in each record and in the file metadata. */
export const SCHEMA_VERSION = 5;

export const SCHEMA_NAMESPACE = "farm.trajectory";

/** File-level metadata keys (Avro header `meta`, values are UTF-8 bytes). */
export const META_SCHEMA_VERSION = "farm.schema.version";
export const META_WRITER_ID = "farm.writer.id";
export const META_FRAME_EVERY = "farm.frame.every";

const timestampMillis: AvroSchema.LogicalType = { type: "long", logicalType: "timestamp-millis" };

const extraSchema: AvroSchema.RecordType = {
  type: "record",
  name: "Extra",
  doc:
    "One value of a task extra (AndroidEnv extras_spec) logged during the step. The value is flattened " +
    "row-major into exactly ONE of doubles / longs / strings / booleans according to dtype " +
    "(FLOAT, DOUBLE -> doubles; INT*, UINT* -> longs; BOOL -> booleans; STRING* -> strings); the others are null. " +
    "OBJECT values, and values whose nesting does not match `shape` or whose leaves do not fit the dtype, " +
    "are stored as JSON text in `json` instead. Rebuild the array with `shape` (empty shape = scalar).",
  fields: [
    { name: "name", type: "string", doc: "Extra name as declared in the task's extras_spec." },
    { name: "dtype", type: "string", doc: "Declared dtype: FLOAT, DOUBLE, INT8..INT64, UINT8..UINT64, BOOL, STRING, STRING_U1.., OBJECT." },
    { name: "shape", type: { type: "array", items: "int" }, doc: "Declared shape; [] for a scalar." },
    { name: "doubles", type: ["null", { type: "array", items: "double" }], default: null, doc: "Row-major values for FLOAT/DOUBLE." },
    { name: "longs", type: ["null", { type: "array", items: "long" }], default: null, doc: "Row-major values for INT*/UINT*." },
    { name: "strings", type: ["null", { type: "array", items: "string" }], default: null, doc: "Row-major values for STRING*." },
    { name: "booleans", type: ["null", { type: "array", items: "boolean" }], default: null, doc: "Row-major values for BOOL." },
    { name: "json", type: ["null", "string"], default: null, doc: "JSON text of the value when it is not stored in a typed array (OBJECT or irregular)." },
  ],
};

const actionSchema: AvroSchema.RecordType = {
  type: "record",
  name: "Action",
  doc: "The AndroidEnv action: one finger; position in [0,1]^2 (x to the right, y down), present even for LIFT/REPEAT.",
  fields: [
    { name: "actionType", type: { type: "enum", name: "ActionType", symbols: ["TOUCH", "LIFT", "REPEAT"] } },
    { name: "x", type: "double" },
    { name: "y", type: "double" },
  ],
};

/** v3: one element of the screen as the agent was shown it (the policy's UiElement, AndroidWorld's UIElement names). */
const elementSchema: AvroSchema.RecordType = {
  type: "record",
  name: "Element",
  doc: "v3: one element of the screen as an agent was shown it: a visible node of the accessibility tree that is actionable or carries text. `index` is what a UI action's index points at.",
  fields: [
    { name: "index", type: "int", doc: "Position in the element list (0-based)." },
    { name: "class_name", type: "string" },
    { name: "text", type: "string" },
    { name: "content_description", type: "string" },
    { name: "hint_text", type: "string" },
    { name: "resource_id", type: "string" },
    { name: "package_name", type: "string" },
    { name: "bounds", type: { type: "array", items: "int" }, doc: "[left, top, right, bottom] in screen pixels." },
    { name: "is_clickable", type: "boolean" },
    { name: "is_long_clickable", type: "boolean" },
    { name: "is_editable", type: "boolean" },
    { name: "is_scrollable", type: "boolean" },
    { name: "is_checkable", type: "boolean" },
    { name: "is_checked", type: "boolean" },
    { name: "is_focused", type: "boolean" },
    { name: "is_enabled", type: "boolean" },
    { name: "is_selected", type: "boolean" },
  ],
};

/** v3: the screen as a tree; defined here once and referred to by name in `Episode.initialA11y`. */
const a11ySchema: AvroSchema.RecordType = {
  type: "record",
  name: "A11yObservation",
  doc: "v3: the screen as a tree: the compact versioned JSON of the accessibility tree (`{\"v\":1,...}`) and the element list derived from it.",
  fields: [
    { name: "tree", type: "string", doc: "Compact JSON of the tree: {v, source, rotation, columns, windows:[{..., nodes:[[row]...]}]}." },
    { name: "elements", type: { type: "array", items: elementSchema } },
  ],
};

const uiStepSchema: AvroSchema.RecordType = {
  type: "record",
  name: "UiStep",
  doc: "v3: a step whose answer was not an AndroidEnv touch (then action is REPEAT).",
  fields: [
    { name: "given", type: "string", doc: "The answer as the policy gave it: the JSON it sent, or a model's whole text." },
    { name: "action", type: ["null", "string"], default: null, doc: "The AndroidWorld JSON action read from the answer (compact JSON); null when the answer held none that was valid." },
    { name: "resolved", type: ["null", "string"], default: null, doc: "What it did on the device (JSON: op, x, y, element, text, key, app, ...); null when invalid." },
    { name: "invalid", type: ["null", "string"], default: null, doc: "Why the answer was invalid; null when it was carried out." },
  ],
};

const stepSchema: AvroSchema.RecordType = {
  type: "record",
  name: "Step",
  doc: "One agent step: the action sent, the reward and extras that followed it.",
  fields: [
    { name: "index", type: "int", doc: "1-based step index." },
    { name: "timeOffsetMs", type: "long", doc: "Milliseconds since the end of the reset (rounded)." },
    { name: "action", type: actionSchema },
    { name: "reward", type: "double", doc: "Reward collected for this step." },
    { name: "extras", type: { type: "array", items: extraSchema }, doc: "Extras logged during this step, in log order." },
    {
      name: "frame",
      type: ["null", "bytes"],
      default: null,
      doc: "The observation after the action, encoded as the episode's frameEncoding says (PNG unless it says otherwise); only on every k-th step (see frameEvery), else null.",
    },
    {
      name: "a11y",
      type: ["null", a11ySchema],
      default: null,
      doc: "v3: the screen as a tree after the action, on every a11yEvery-th step (same rule as frame), else null.",
    },
    { name: "ui", type: ["null", uiStepSchema], default: null, doc: "v3: set when the answer was a UI action or invalid; null for AndroidEnv touches." },
    { name: "settleMs", type: ["null", "double"], default: null, doc: "v5: how long the step waited for the screen to settle after its action, before its observation (ms); null when no settle policy ran." },
    { name: "settleCapped", type: "boolean", default: false, doc: "v5: the settle policy gave up at its cap (the screen never settled) and the observation was taken anyway." },
    { name: "policyVersion", type: ["null", "string"], default: null, doc: "v5: the policy version that chose this step's answer, when the policy reported one." },
    { name: "policyMs", type: ["null", "double"], default: null, doc: "v5: how long the policy (a program or a human operator) took to answer (ms)." },
    { name: "instruction", type: ["null", "string"], default: null, doc: "v5: a per-step instruction that went with the answer (AndroidControl's), when given." },
  ],
};

/** v4: one check of a task instance's final score (issue 41). */
const checkSchema: AvroSchema.RecordType = {
  type: "record",
  name: "Check",
  doc: "v4: one check of the task instance's final score: what it read from the device and how it compared.",
  fields: [
    { name: "name", type: "string", doc: "The check's name (`name:` in the family, else `checks[i] <source>`; a task server's own)." },
    { name: "kind", type: "string", doc: "Its source: shell, setting, file, sql, tree, activity, answer, or remote (a task server's)." },
    { name: "passed", type: "boolean" },
    { name: "observed", type: "string", doc: "What was read from the device (at most 1024 characters, cut with …); \"\" when nothing was read." },
    { name: "expected", type: "string", doc: "What it was compared with, rendered (== \"1\", regex ^on$, exists, …)." },
    { name: "error", type: ["null", "string"], default: null, doc: "Why the check could not run (then passed is false and the episode's scoreError is set)." },
  ],
};

/** The writer's schema (and the default reader schema) of this version. */
export const episodeSchema: AvroSchema.RecordType = {
  type: "record",
  name: "Episode",
  namespace: SCHEMA_NAMESPACE,
  doc:
    "One finished episode of the Android episode farm. episodeId = campaignId + '-' + episodeIndex identifies " +
    "the episode across retries: two records with the same episodeId are duplicates (compare attempt).",
  fields: [
    { name: "schemaVersion", type: "int", doc: "Version of this schema the record was written with." },
    { name: "episodeId", type: "string", doc: "campaignId + '-' + episodeIndex; unique per campaign episode." },
    { name: "campaignId", type: "string" },
    { name: "episodeIndex", type: "long", doc: "0-based index of the episode in its campaign." },
    { name: "attempt", type: "int", doc: "1-based attempt number of the episode job (retries increase it)." },
    { name: "taskId", type: "string" },
    { name: "taskHash", type: "string", doc: "Hash of the normalised task; same id with another hash = changed task." },
    { name: "taskDialect", type: ["null", "string"], default: null, doc: "Task file dialect (seed-2021, internal-2021, current), when known." },
    { name: "policyName", type: "string" },
    { name: "policyVersion", type: "string" },
    { name: "seed", type: "long", doc: "Episode seed given to the policy and the task's random choices." },
    { name: "worker", type: "string", doc: "Worker (host/process) that ran the episode." },
    { name: "deviceSerial", type: "string", doc: "ADB serial of the device (emulator) that ran the episode." },
    { name: "startedAt", type: timestampMillis, doc: "Episode start (UTC)." },
    { name: "endedAt", type: timestampMillis, doc: "Episode end (UTC)." },
    {
      name: "outcome",
      type: { type: "enum", name: "Outcome", symbols: ["terminated", "truncated"] },
      doc: "terminated: the task ended the episode; truncated: the farm stopped it (see cause).",
    },
    {
      name: "cause",
      type: "string",
      doc:
        "Why it ended: episode_end, step_limit, time_limit, app_left, reset_failed, action_failed, " +
        "observation_failed, device_hung, device_lost, policy_failed, cancelled, agent_status, invalid_actions, goal_reached (a string so new causes need no schema change).",
    },
    { name: "causeDetail", type: "string", doc: "Human-readable detail of the cause; may be empty." },
    { name: "totalReward", type: "double" },
    { name: "stepCount", type: "int", doc: "Number of steps (= length of steps)." },
    { name: "frameEvery", type: "int", doc: "Frames were kept on steps whose index is a multiple of this; 0 = no frames." },
    { name: "counters", type: { type: "map", values: "long" }, doc: "Counted problems (malformed log lines, dropped extras, ...)." },
    { name: "steps", type: { type: "array", items: stepSchema } },
    {
      name: "frameEncoding",
      type: "string",
      default: "png",
      doc:
        "v2: how the steps' frames are encoded: png (lossless), jpeg:Q or webp:Q (lossy, quality Q), optionally @WxH when " +
        "stored at another size than the device's; \"png\" in files written before v2.",
    },
    {
      name: "resetKind",
      type: "string",
      default: "steps",
      doc: "v2: how the device was reset: steps (the task's reset steps), snapshot (a snapshot of the setup state loaded, then the reset steps), start_snapshot (a snapshot taken after setup + reset steps loaded, no reset steps), snapshot_fallback (the snapshot did not load: full setup, then the reset steps).",
    },
    { name: "resetMs", type: ["null", "double"], default: null, doc: "v2: how long the reset took (ms), snapshot load or setup included; null in files before v2." },
    { name: "goal", type: "string", default: "", doc: "v3: the episode's goal text (the campaign's for this episode, else the task's description); \"\" before v3." },
    { name: "a11yEvery", type: "int", default: 0, doc: "v3: the screen was recorded as a tree on steps whose index is a multiple of this; 0 = never." },
    { name: "initialFrame", type: ["null", "bytes"], default: null, doc: "v3: the first observation's frame (what step 1's action was chosen on), encoded as frameEncoding says; null when frames were not recorded." },
    { name: "initialA11y", type: ["null", "A11yObservation"], default: null, doc: "v3: the first observation's tree and elements, when a11y was recorded." },
    { name: "agentStatus", type: ["null", "string"], default: null, doc: "v3: what the agent declared with a status action (complete, infeasible); the reward still says whether it succeeded." },
    { name: "answer", type: ["null", "string"], default: null, doc: "v3: the agent's answer text (the last one), when it gave one." },
    { name: "invalidActions", type: "int", default: 0, doc: "v3: answers recorded as invalid (malformed JSON, index out of range, unknown app, ...)." },
    {
      name: "params",
      type: { type: "map", values: "string" },
      default: {},
      doc: "v4: the task instance's parameters (a family's, drawn from the seed or fixed by the campaign; a task server's), each value as JSON text (\"on\", 3, true); {} without an instance.",
    },
    { name: "success", type: ["null", "double"], default: null, doc: "v4: 0..1 from the task instance's final score (its checks combined); null without an instance or when the score was an error." },
    { name: "checks", type: { type: "array", items: checkSchema }, default: [], doc: "v4: each check of the final score, with its observed and expected values." },
    { name: "scoreError", type: ["null", "string"], default: null, doc: "v4: why the final score could not be computed (a check that could not run, a task server that failed); then success is null, never a silent 0." },
    { name: "settle", type: "string", default: "", doc: "v5: the settle policy the steps observed with (none, fixed:MS, androidworld, events, frames, with their settings); \"\" before v5." },
    { name: "groupIndex", type: ["null", "long"], default: null, doc: "v5: the task instance (group) this episode is a member of, in a campaign with --group-size; null otherwise." },
    { name: "groupMember", type: "int", default: 0, doc: "v5: this episode's 0-based member index in its group." },
    { name: "groupSize", type: "int", default: 0, doc: "v5: K, the episodes per group; 0 when the campaign has no groups." },
    { name: "firstPolicyVersion", type: ["null", "string"], default: null, doc: "v5: the policy version of the first step that reported one." },
    { name: "lastPolicyVersion", type: ["null", "string"], default: null, doc: "v5: the policy version of the last step that reported one." },
    { name: "stale", type: ["null", "string"], default: null, doc: "v5: why the episode is too stale for a learner (its versions span or lag more than the campaign's max staleness); null when it is not." },
  ],
};
