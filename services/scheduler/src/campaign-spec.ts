/**
 * A campaign: one task, one policy, N episodes from a base seed, a priority and per-episode options.
 *
 * Its id is deterministic — given by the user, or derived from what defines the work (task id and hash,
 * policy, episodes, base seed, options) — so submitting the same campaign twice names the same record
 * and the same job ids, and adds nothing. Priority is not part of the derived id: it says when, not what.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import {
  CAMPAIGN_ID_PATTERN,
  gameConfigSchema,
  goalSchema,
  paramsSchema,
  CAMPAIGN_PRIORITY_MAX,
  MAX_GROUP_SIZE,
  DEFAULT_CAMPAIGN_PRIORITY,
  episodeOptionsSchema,
  policyRefSchema,
  type EpisodeOptions,
  type PolicyRef,
} from "@farm/queue";
import { episodeSeed, MAX_SEED } from "@farm/seeded-random";
import { fixedParamsProblem } from "@farm/scoring/params";
import { canonicalJson, type CatalogTask } from "@farm/task";
import { SchedulerError } from "./errors.ts";

/** Upper bound on episodes per campaign; the done-bitmap of the largest campaign is 12.5 MB. */
export const MAX_CAMPAIGN_EPISODES = 100_000_000;

/** Upper bound on a campaign's goals (issue 28); the whole request stays under the API's body limit. */
export const MAX_CAMPAIGN_GOALS = 10_000;
/** `POST /campaigns` body limit: room for a goals list (was 64 KiB before goals). */
export const CAMPAIGN_BODY_LIMIT = "1mb";

/**
 * One episode's goal, optionally its app's RL_TASK_GAME_CONFIG, and for a task family its fixed parameters (a line of
 * `farm submit --goals FILE.jsonl`). `goal` may be left out only for a family (it renders its goal template from the
 * episode's parameters): `goalsRefusal` says so against the task.
 */
export const campaignGoalSchema = z
  .strictObject({ goal: goalSchema.optional(), gameConfig: gameConfigSchema.optional(), params: paramsSchema.optional() })
  .refine((g) => g.goal !== undefined || g.gameConfig !== undefined || g.params !== undefined, "give goal, gameConfig or params");
export type CampaignGoal = z.infer<typeof campaignGoalSchema>;

/**
 * Why these goals cannot run with this task, or undefined: `params` for a task that is not a family, a line without
 * a goal for a task that is not a family (nothing would render it), fixed params that do not fit the family's
 * declarations (`@farm/scoring` fixedParamsProblem: unknown names, wrong types). A family served by a task server
 * takes any params (the server declares them). Names `goals.<i>.<field>`.
 */
export function goalsRefusal(task: CatalogTask, goals: readonly CampaignGoal[] | undefined): string | undefined {
  const family = task.family;
  for (const [i, g] of (goals ?? []).entries()) {
    if (!family) {
      if (g.params !== undefined) return `goals.${i}.params: task '${task.task.id}' is not a task family; only a family takes params (libs/task/FAMILIES.md)`;
      if (g.goal === undefined) return `goals.${i}.goal: missing; only a task family renders its goal from params`;
    } else if (g.params !== undefined && !family.taskServer) {
      const problem = fixedParamsProblem(family.params, g.params);
      if (problem) return `goals.${i}.params: ${problem}`;
    }
  }
  return undefined;
}

/** What a client submits (CLI, HTTP body). `policy` may be a bare spec string. */
export const campaignInputSchema = z.strictObject({
  id: z.string().regex(CAMPAIGN_ID_PATTERN, "1-64 letters, digits, '_', '.', '-', starting with a letter or digit").optional(),
  taskId: z.string().min(1).max(128),
  /** Optional: when given it must equal the scheduler's hash of the task (guards against stale files). */
  taskHash: z.string().regex(/^[0-9a-f]{64}$/, "64 lowercase hex digits (sha256)").optional(),
  policy: z.union([policyRefSchema.shape.spec, policyRefSchema]).default("random"),
  episodes: z.int().min(1).max(MAX_CAMPAIGN_EPISODES),
  baseSeed: z.int().min(0).max(MAX_SEED).default(0),
  priority: z.int().min(0).max(CAMPAIGN_PRIORITY_MAX).default(DEFAULT_CAMPAIGN_PRIORITY),
  options: episodeOptionsSchema.default({}),
  /** Episode i gets goals[i mod N] (queue goalForEpisode); absent: every episode's goal is the task's description (a family's: its template). */
  goals: z.array(campaignGoalSchema).min(1).max(MAX_CAMPAIGN_GOALS).optional(),
  /**
   * GRPO-style groups (issue 38): every task instance (seed, params, goal) runs `groupSize` times; `episodes` counts
   * every run (groups × groupSize, a multiple of groupSize). Instance g = episodes g·K … g·K+K−1.
   */
  groupSize: z.int().min(1).max(MAX_GROUP_SIZE).optional(),
  /** A completed group whose rewards are all equal is followed by a new instance (a new group), at most this many times. */
  resampleUniformGroups: z.int().min(0).max(MAX_CAMPAIGN_EPISODES).optional(),
})
  .refine((c) => c.groupSize === undefined || c.episodes % c.groupSize === 0, { path: ["episodes"], message: "with groupSize K, episodes counts every run: give a multiple of K (groups × K)" })
  .refine((c) => c.resampleUniformGroups === undefined || c.groupSize !== undefined, { path: ["resampleUniformGroups"], message: "needs groupSize" });

export type CampaignInput = z.input<typeof campaignInputSchema>;

/** `GET /campaigns?limit=N`: at most this many, newest first. */
export const campaignListQuerySchema = z.object({ limit: z.int().min(1).max(1000).default(100) });

/** Lenient reading of `?limit=` (a query string is typed by hand): out of range → clamped, not a number → 100. */
export function clampListLimit(raw: unknown): number {
  const n = Math.trunc(Number(Array.isArray(raw) ? raw[0] : (raw ?? 100)));
  return Number.isFinite(n) && n !== 0 ? Math.min(1000, Math.max(1, n)) : 100;
}

/** A validated campaign with its task resolved, as stored in Redis. */
export interface CampaignSpec {
  id: string;
  taskId: string;
  taskHash: string;
  policy: PolicyRef;
  episodes: number;
  baseSeed: number;
  priority: number;
  options: EpisodeOptions;
  goals?: CampaignGoal[];
  /** Runs per task instance (GRPO groups); absent: one. */
  groupSize?: number;
  /** Most uniform groups followed by a new instance; absent: none. */
  resampleUniformGroups?: number;
}

export function parseCampaignInput(input: unknown): z.output<typeof campaignInputSchema> {
  const r = campaignInputSchema.safeParse(input);
  if (!r.success) {
    const detail = r.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
    throw new SchedulerError("SPEC_INVALID", `invalid campaign: ${detail}`);
  }
  return r.data;
}

/** The fields that define the work (everything but id and priority), canonically serialised. */
export function campaignIdentity(spec: Omit<CampaignSpec, "id" | "priority">): string {
  return canonicalJson({
    taskId: spec.taskId,
    taskHash: spec.taskHash,
    policy: spec.policy,
    episodes: spec.episodes,
    baseSeed: spec.baseSeed,
    options: spec.options,
    // Absent, not empty: campaigns without goals keep the ids they had before goals existed.
    ...(spec.goals ? { goals: spec.goals } : {}),
    ...(spec.groupSize !== undefined ? { groupSize: spec.groupSize } : {}),
    ...(spec.resampleUniformGroups !== undefined ? { resampleUniformGroups: spec.resampleUniformGroups } : {}),
  });
}

/** `c` + 16 hex digits of sha256(identity): starts with a letter, never contains `:`. */
export function deriveCampaignId(spec: Omit<CampaignSpec, "id" | "priority">): string {
  return `c${createHash("sha256").update(campaignIdentity(spec)).digest("hex").slice(0, 16)}`;
}

/** Seed of episode `index`: base seed + index, wrapped into 32 bits (the one formula, also `farm run`'s). */
export { episodeSeed };

/** Episode `index` of a grouped campaign: its group (the task instance) and member. */
export function groupOf(groupSize: number, index: number): { index: number; member: number; size: number } {
  return { index: Math.floor(index / groupSize), member: index % groupSize, size: groupSize };
}
