/**
 * The payload of an episode job and the result a worker returns for it, as zod schemas.
 *
 * A job names its task by id and content hash only — never commands, paths or code. The worker looks the
 * task up in its own task folder and refuses the job (`JobRejectedError`, no retry) when the id is
 * unknown or the hash differs (see task-check.ts). Every field is bounded so a hostile or buggy producer
 * cannot make a worker run unbounded episodes.
 */
// Subpaths: the spec parsers and bounds only, so the queue's users do not load the episode runner, the policies or sharp.
import { SETTLE_SPEC_MAX_CHARS, settleSpecProblem } from "@farm/episode/settle-spec";
import { parseFrameSpec } from "@farm/frames/spec";
import { terminalSafe } from "@farm/terminal-text";
import { LLM_MODEL_PATTERN, LLM_SETTING_BOUNDS as LLM, PROMPT_TEMPLATE_MAX_CHARS } from "@farm/policy/settings";
import { z } from "zod";
import { QueueError } from "./errors.ts";
import { CAMPAIGN_ID_PATTERN } from "./ids.ts";
import { UnparseablePayload } from "./tolerant-job.ts";
import { stalenessOptionSchema } from "./policy-versions.ts";
import { gameConfigSchema, goalSchema, paramsSchema } from "./goals.ts";

/** Bumped on incompatible changes; workers refuse versions they do not know. */
export const EPISODE_JOB_VERSION = 1;

/** A task id as the task loader produces it (file-name-like), bounded. */
const taskIdSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.\-]{0,127}$/, "task id: 1-128 letters, digits, '_', '.', '-'");
/** sha256 hex, as `LoadedTask.hash`. */
const taskHashSchema = z.string().regex(/^[0-9a-f]{64}$/, "task hash: 64 lowercase hex digits (sha256)");

/**
 * Which policy drives the episode: `random`, `scripted:<name>`, `module:<name>` (a name the worker
 * resolves from its own allow-list, never a path), `http:<http(s) url>` (a remote policy server) or
 * `llm:<model>@<endpoint>` (a model behind an OpenAI-compatible API; its settings in `llm`).
 */
export const POLICY_SPEC_PATTERN = new RegExp(
  `^(random|human|scripted:[A-Za-z0-9_.-]{1,64}|module:[A-Za-z0-9_.-]{1,64}|http(?:-batch)?:https?://[^\\s]{1,2000}|llm:${LLM_MODEL_PATTERN.source.slice(1, -1)}@https?://[^\\s]{1,2000})$`,
);

/**
 * How an `llm:<model>@<endpoint>` policy asks its model (@farm/policy LlmPolicyOptions, same names). The API key is
 * never here: each worker reads its own FARM_LLM_API_KEY.
 */
export const llmPolicySettingsSchema = z.strictObject({
  maxTokens: z.int().min(LLM.maxTokens.min).max(LLM.maxTokens.max).optional(),
  temperature: z.number().min(LLM.temperature.min).max(LLM.temperature.max).optional(),
  timeoutMs: z.int().min(LLM.timeoutMs.min).max(LLM.timeoutMs.max).optional(),
  /** Requests in flight at once to the endpoint from one worker process. */
  concurrency: z.int().min(LLM.concurrency.min).max(LLM.concurrency.max).optional(),
  screenshot: z.boolean().optional(),
  screenshotMaxSide: z.int().min(LLM.screenshotMaxSide.min).max(LLM.screenshotMaxSide.max).optional(),
  /** The prompt template's text (placeholders: @farm/policy llm/prompt.ts); default: the policy's own. */
  promptTemplate: z.string().min(1).max(PROMPT_TEMPLATE_MAX_CHARS).optional(),
});

export const policyRefSchema = z.strictObject({
  spec: z
    .string()
    .regex(POLICY_SPEC_PATTERN, "policy spec: random | human | scripted:<name> | module:<name> | http:<http(s) url> | http-batch:<http(s) url> | llm:<model>@<http(s) endpoint>")
    // Jobs are readable by anyone who can read the queue (UI, status): no credentials in them.
    .refine((s) => !/^(?:http(?:-batch)?:|llm:[^@]*@)https?:\/\/[^/?#]*@/i.test(s), "policy spec: an http policy URL must not carry user:password@ (the job is readable by every queue reader)"),
  /** Display name for logs and trajectories; defaults to the spec on the worker side. */
  name: z.string().min(1).max(128).optional(),
  /** Only for `llm:` specs. */
  llm: llmPolicySettingsSchema.optional(),
});

/** Per-episode options: each overrides the task's own limit when set. */
export const episodeOptionsSchema = z.strictObject({
  /** Step limit (overrides the task's max_episode_steps). */
  maxEpisodeSteps: z.int().min(1).max(1_000_000).optional(),
  /** Wall-clock limit in seconds (overrides the task's max_episode_sec). At most one day. */
  maxEpisodeSec: z.number().positive().max(86_400).optional(),
  /** Record a frame every N steps in the trajectory; 0 = no frames. */
  frameEvery: z.int().min(0).max(1_000_000).optional(),
  /** How recorded frames are stored: png (default), jpeg[:Q], webp[:Q], optionally @WxH (see @farm/frames). */
  frameEncoding: z
    .string()
    .max(40)
    .refine((v) => typeof parseFrameSpec(v) !== "string", { message: "frameEncoding: png, jpeg[:QUALITY] or webp[:QUALITY], optionally @WIDTHxHEIGHT (e.g. jpeg:85@540x960)" })
    .optional(),
  /** Reset from a snapshot of the device's setup state (then the task's reset steps); emulators only, others fall back. Older form of `resetMode: "setup-snapshot"`. */
  resetFromSnapshot: z.boolean().optional(),
  /**
   * How each episode starts: `steps` (the task's reset steps; the default), `setup-snapshot` (a snapshot of the setup
   * state loaded, then the reset steps) or `start-snapshot` (a snapshot taken once after setup and the reset steps
   * loaded, no reset steps). Snapshots need emulators; elsewhere the reset is by steps.
   */
  resetMode: z.enum(["steps", "setup-snapshot", "start-snapshot"]).optional(),
  /** Per-step deadline in milliseconds (a hung device truncates the episode). */
  stepTimeoutMs: z.int().min(100).max(600_000).optional(),
  /** Policy deadline in milliseconds (one act/reset; past it the request is aborted, the episode ends policy_failed). Default: the worker's, else the policy's own need. */
  policyTimeoutMs: z.int().min(100).max(3_600_000).optional(),
  /** Record the screen as a tree (a11y) every N steps; 0 or absent = never (a policy that needs elements gets them anyway). */
  a11yEvery: z.int().min(0).max(1_000_000).optional(),
  /** Invalid answers (bad UI actions) after which the episode ends truncated (`invalid_actions`); 0 or absent = no limit. */
  maxInvalidActions: z.int().min(0).max(1_000_000).optional(),
  /** Bytes of recorded observations (trees, frames, answers) per episode, in MiB; past it the episode records no more (`stop_recording`, default) or ends (`end`: cause observation_budget). */
  observationBudget: z.strictObject({ maxMb: z.int().min(1).max(16_384), onExceeded: z.enum(["stop_recording", "end"]).optional() }).optional(),
  /** Policy versions (issue 38): an episode whose steps' versions span, or lag the campaign's current version by, more than `maxVersions` is stale: marked (`mark`, default) or ended (`end`: cause stale_policy). */
  staleness: stalenessOptionSchema.optional(),
  /** How each step waits for the screen to settle after its action (issue 36): none | fixed:MS | androidworld[:…] | events[:quiet=MS,cap=MS] | frames[:…]; parsed by @farm/episode's parseSettleSpec. */
  settle: z
    .string()
    .max(SETTLE_SPEC_MAX_CHARS)
    .refine((v) => settleSpecProblem(v) === undefined, { error: (iss) => `settle: ${settleSpecProblem(iss.input) ?? "invalid"}` })
    .optional(),
  /** `human` policy: how long a lease outlives the operator's closed page, the longest idle on one step, the longest wait for any operator, and what an abandoned episode becomes (`retry`: back to the queue, nothing recorded; `record`: committed as operator_abandoned). */
  operator: z
    .strictObject({
      graceSec: z.number().min(0.2).max(3600).optional(),
      idleSec: z.number().min(0.5).max(86_400).optional(),
      waitSec: z.number().min(1).max(86_400).optional(),
      onAbandon: z.enum(["retry", "record"]).optional(),
    })
    .optional(),
});

/** Most members of one group (`--group-size`): GRPO uses 4–64 rollouts a prompt. */
export const MAX_GROUP_SIZE = 256;

export const episodeJobDataSchema = z.strictObject({
  v: z.literal(EPISODE_JOB_VERSION),
  campaignId: z.string().regex(CAMPAIGN_ID_PATTERN, "campaign id: 1-64 letters, digits, '_', '.', '-'"),
  /** 0-based position of the episode in its campaign. */
  episodeIndex: z.int().min(0).max(Number.MAX_SAFE_INTEGER),
  taskId: taskIdSchema,
  taskHash: taskHashSchema,
  policy: policyRefSchema,
  /** Seed of this episode (campaign base seed + index, modulo 2^32). */
  seed: z.int().min(0).max(2 ** 32 - 1),
  options: episodeOptionsSchema,
  /** This episode's goal (the campaign's goals, line episodeIndex mod N); absent = the task's description. */
  goal: goalSchema.optional(),
  /** This episode's RL_TASK_GAME_CONFIG, in place of the one the task's reset start_activity passes. */
  gameConfig: gameConfigSchema.optional(),
  /** This episode's fixed task-family parameters (the campaign's goals line `params`); the family draws the rest from `seed`. */
  params: paramsSchema.optional(),
  /**
   * GRPO-style groups (issue 38): this episode is member `member` of group `index` (the task instance: every member has
   * the same seed, params and goal), of `size` members. Absent: a campaign without groups.
   */
  group: z
    .strictObject({ index: z.int().min(0).max(Number.MAX_SAFE_INTEGER), member: z.int().min(0).max(MAX_GROUP_SIZE - 1), size: z.int().min(1).max(MAX_GROUP_SIZE) })
    .refine((g) => g.member < g.size, "group.member must be below group.size")
    .optional(),
});

export type EpisodeJobData = z.infer<typeof episodeJobDataSchema>;

export type PolicyRef = z.infer<typeof policyRefSchema>;
export type LlmPolicySettings = z.infer<typeof llmPolicySettingsSchema>;
export type EpisodeOptions = z.infer<typeof episodeOptionsSchema>;

/**
 * What a worker returns from its processor for a finished episode (terminated or truncated — both are
 * results, not failures). The scheduler counts the episode once from this value. Mirrors
 * `EpisodeTrajectory` of @farm/episode (outcome, cause) plus where the trajectory went.
 */
export const episodeJobResultSchema = z.object({
  v: z.literal(EPISODE_JOB_VERSION),
  /** `terminated` = the task ended the episode; `truncated` = the farm stopped it. */
  outcome: z.enum(["terminated", "truncated"]),
  /** Why it ended: an EndCause of @farm/episode (`episode_end`, `step_limit`, …); a bounded metric label. */
  cause: z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, "cause: lower_snake_case, at most 64 characters"),
  steps: z.int().min(0),
  reward: z.number().finite(),
  durationMs: z.number().min(0).optional(),
  /** Where the trajectory was written (path or URL as the worker's storage names it), if anywhere. */
  trajectoryFile: z.string().max(4096).optional(),
  /** Worker host / process name and device serial, for tracing. */
  worker: z.string().max(256),
  device: z.string().max(256),
});

export type EpisodeJobResult = z.infer<typeof episodeJobResultSchema>;

/** Field paths and messages of the first few issues; keys from the payload are quoted and bounded. */
function describeIssues(error: z.ZodError): string {
  const shown = error.issues.slice(0, 5).map((i) => {
    const path = i.path.length ? i.path.map((p) => (typeof p === "number" ? String(p) : /^[A-Za-z_][A-Za-z0-9_]{0,40}$/.test(String(p)) ? String(p) : JSON.stringify(String(p).slice(0, 40)))).join(".") : "(root)";
    return `${path}: ${terminalSafe(i.message).slice(0, 200)}`;
  });
  return shown.join("; ") + (error.issues.length > 5 ? `; … ${error.issues.length - 5} more` : "");
}

/** A job id for messages: printable and bounded (ids of hostile jobs may be anything). */
export function jobIdForMessage(jobId: string | undefined): string {
  if (jobId === undefined) return "(no id)";
  const p = terminalSafe(jobId);
  return p.length > 100 ? `${p.slice(0, 97)}...` : p;
}

/** Validates a job's data; the error names the job id and each failing field. */
export function parseEpisodeJob(data: unknown, jobId: string | undefined): EpisodeJobData {
  const id = jobIdForMessage(jobId);
  if (data instanceof UnparseablePayload) {
    throw new QueueError("JOB_PAYLOAD_INVALID", `job ${id}: ${data.why}: ${JSON.stringify(data.excerpt)}`);
  }
  const r = episodeJobDataSchema.safeParse(data);
  if (!r.success) {
    throw new QueueError("JOB_PAYLOAD_INVALID", `job ${id}: invalid episode job data: ${describeIssues(r.error)}`);
  }
  return r.data;
}

/** Validates a job's return value (as the worker returned it, or parsed back from Redis). */
export function parseEpisodeJobResult(value: unknown, jobId: string | undefined): EpisodeJobResult {
  const r = episodeJobResultSchema.safeParse(value);
  if (!r.success) {
    throw new QueueError("JOB_RESULT_INVALID", `job ${jobIdForMessage(jobId)}: invalid episode result: ${describeIssues(r.error)}`);
  }
  return r.data;
}
