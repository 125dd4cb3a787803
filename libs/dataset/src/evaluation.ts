/**
 * Evaluation numbers of a data set, all from SQL a user can run themselves (`farm trajectories query "<sql>" DIR`):
 * success rate per campaign, task and goal with Wilson 95 % score intervals, episodes, steps and time per
 * episode, invalid answers per step, tokens and model latency per step (from the `policy_*` extras), outcomes
 * and end causes; and the difference of two sides per task with Newcombe's interval.
 *
 * Success of an episode: its `success` column (the task's score, 0..1) is 1 when the data set has that column and
 * the value is not null; else its total reward (`episode_return`) is above 0.
 *
 * Wilson score interval for k successes in n episodes at z = 1.96:
 *   centre (k + z²/2) / (n + z²), half-width z·sqrt(k(n − k)/n + z²/4) / (n + z²).
 * Difference of two rates (p2 − p1), Newcombe's hybrid score interval from the two Wilson intervals (l, u):
 *   [d − sqrt((p2 − l2)² + (u1 − p1)²), d + sqrt((u2 − p2)² + (p1 − l1)²)].
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { openDatasetDb, sqlString, type DatasetDb } from "./dataset-db.ts";
import { exportParquet } from "./export.ts";

export const WILSON_Z = 1.96;

export interface Interval {
  rate: number;
  low: number;
  high: number;
}

/** Wilson score interval of k successes in n trials (n = 0: the whole [0, 1]). */
export function wilsonInterval(k: number, n: number, z = WILSON_Z): Interval {
  if (n <= 0) return { rate: 0, low: 0, high: 1 };
  const z2 = z * z;
  const centre = (k + z2 / 2) / (n + z2);
  const half = (z * Math.sqrt((k * (n - k)) / n + z2 / 4)) / (n + z2);
  return { rate: k / n, low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}

export interface Difference {
  /** other − base. */
  diff: number;
  low: number;
  high: number;
  /** The interval excludes 0: the two differ beyond noise (at 95 %). */
  differs: boolean;
}

/** Newcombe's hybrid score interval (method 10) of p_other − p_base. */
export function rateDifference(base: { successes: number; episodes: number }, other: { successes: number; episodes: number }, z = WILSON_Z): Difference {
  const a = wilsonInterval(base.successes, base.episodes, z);
  const b = wilsonInterval(other.successes, other.episodes, z);
  const diff = b.rate - a.rate;
  const low = diff - Math.sqrt((b.rate - b.low) ** 2 + (a.high - a.rate) ** 2);
  const high = diff + Math.sqrt((b.high - b.rate) ** 2 + (a.rate - a.low) ** 2);
  return { diff, low, high, differs: low > 0 || high < 0 };
}

/** One row of the report: a campaign's episodes of one task (and goal, in `byGoal`). */
export interface EvaluationRow {
  campaignId: string;
  policy: string;
  taskId: string;
  goal?: string | null;
  episodes: number;
  successes: number;
  /** Episodes whose success came from the `success` column (the rest from the reward). */
  scored: number;
  rate: number;
  low: number;
  high: number;
  stepsPerEpisode: number;
  secondsPerEpisode: number;
  invalidPerStep: number;
  /** null when the data set has no such extras (a policy that reports no usage, or the nested layout). */
  promptTokensPerStep: number | null;
  completionTokensPerStep: number | null;
  latencyMsPerStep: number | null;
}

export interface OutcomeRow {
  campaignId: string;
  outcome: string;
  cause: string;
  episodes: number;
}

export interface TaskDifference extends Difference {
  taskId: string;
  base: { episodes: number; successes: number; rate: number };
  other: { episodes: number; successes: number; rate: number };
}

export interface EvaluationSide {
  /** What the side is (a folder, a campaign). */
  label: string;
  campaigns: EvaluationRow[];
  byTask: EvaluationRow[];
  byGoal: EvaluationRow[];
  outcomes: OutcomeRow[];
  /** The queries that made the numbers, runnable as `farm trajectories query "<sql>" DIR`. */
  sql: { byTask: string; byGoal: string; campaigns: string; outcomes: string };
  successRule: string;
}

export interface Evaluation {
  title: string;
  generatedAt: string;
  z: number;
  base: EvaluationSide;
  other?: EvaluationSide;
  /** Tasks of both sides, other − base. */
  differences?: TaskDifference[];
}

export interface EvaluateOptions {
  /** Only these campaigns (default: all of the data set). */
  campaigns?: readonly string[];
  label?: string;
}

/** The success expression for this data set's episodes table. */
async function successSql(db: DatasetDb): Promise<{ ok: string; scored: string; rule: string }> {
  const cols = await db.columns("episodes");
  if (cols.has("success")) {
    return {
      ok: "coalesce(success >= 1, episode_return > 0)",
      scored: "count(success)",
      rule: "success = the task's score (`success` = 1) where the episode has one, else total reward > 0",
    };
  }
  return { ok: "(episode_return > 0)", scored: "0", rule: "success = total reward > 0 (this data set has no `success` column)" };
}

const wilsonSql = (k: string, n: string) => {
  const z2 = `${WILSON_Z} * ${WILSON_Z}`;
  const centre = `((${k}) + ${z2} / 2) / ((${n}) + ${z2})`;
  const half = `${WILSON_Z} * sqrt((${k}) * ((${n}) - (${k})) / (${n}) + ${z2} / 4) / ((${n}) + ${z2})`;
  return `greatest(0.0, ${centre} - ${half}) AS wilson_low, least(1.0, ${centre} + ${half}) AS wilson_high`;
};

/** Per-step usage columns, when the steps table has them: a sub-query keyed by episode. */
async function usageSql(db: DatasetDb): Promise<{ join: string; prompt: string; completion: string; latency: string }> {
  const layout = db.manifest.layout ?? "steps";
  const none = { join: "", prompt: "NULL", completion: "NULL", latency: "NULL" };
  if (layout !== "steps") return none;
  const cols = await db.columns("steps");
  const has = (c: string) => cols.has(c);
  if (!has("extra_policy_prompt_tokens") && !has("extra_policy_completion_tokens") && !has("extra_policy_latency_ms")) return none;
  const sum = (c: string) => (has(c) ? `sum(list_sum(${c}))` : "NULL");
  const per = (c: string) => (has(c) ? `count(list_sum(${c}))` : "NULL");
  return {
    join: `LEFT JOIN (SELECT episode_id, ${sum("extra_policy_prompt_tokens")} AS prompt_tokens, ${per("extra_policy_prompt_tokens")} AS prompt_steps, ${sum("extra_policy_completion_tokens")} AS completion_tokens, ${per("extra_policy_completion_tokens")} AS completion_steps, ${sum("extra_policy_latency_ms")} AS latency_ms, ${per("extra_policy_latency_ms")} AS latency_steps FROM steps GROUP BY episode_id) u USING (episode_id)`,
    prompt: "sum(u.prompt_tokens) / nullif(sum(u.prompt_steps), 0)",
    completion: "sum(u.completion_tokens) / nullif(sum(u.completion_steps), 0)",
    latency: "sum(u.latency_ms) / nullif(sum(u.latency_steps), 0)",
  };
}

function groupSql(keys: string[], ok: string, scored: string, usage: Awaited<ReturnType<typeof usageSql>>, where: string): string {
  return [
    `SELECT ${keys.join(", ")},`,
    `  count(*) AS episodes, sum(CASE WHEN ${ok} THEN 1 ELSE 0 END) AS successes, ${scored} AS scored,`,
    `  sum(CASE WHEN ${ok} THEN 1 ELSE 0 END) / count(*) AS rate,`,
    `  ${wilsonSql(`sum(CASE WHEN ${ok} THEN 1 ELSE 0 END)`, "count(*)")},`,
    `  avg(step_count) AS steps_per_episode, avg(duration_ms) / 1000.0 AS seconds_per_episode,`,
    `  coalesce(sum(invalid_actions), 0) / greatest(sum(step_count), 1) AS invalid_per_step,`,
    `  ${usage.prompt} AS prompt_tokens_per_step, ${usage.completion} AS completion_tokens_per_step, ${usage.latency} AS latency_ms_per_step`,
    `FROM episodes ${usage.join}${where}`,
    `GROUP BY ${keys.join(", ")} ORDER BY ${keys.join(", ")}`,
  ].join("\n");
}

const num = (v: unknown): number => (typeof v === "number" ? v : typeof v === "string" ? Number(v) : 0);
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));

function rowOf(r: Record<string, unknown>): EvaluationRow {
  return {
    campaignId: String(r.campaign_id ?? ""),
    policy: String(r.policy_name ?? ""),
    taskId: String(r.task_id ?? ""),
    ...("goal" in r ? { goal: r.goal === null ? null : String(r.goal) } : {}),
    episodes: num(r.episodes),
    successes: num(r.successes),
    scored: num(r.scored),
    rate: num(r.rate),
    low: num(r.wilson_low),
    high: num(r.wilson_high),
    stepsPerEpisode: num(r.steps_per_episode),
    secondsPerEpisode: num(r.seconds_per_episode),
    invalidPerStep: num(r.invalid_per_step),
    promptTokensPerStep: numOrNull(r.prompt_tokens_per_step),
    completionTokensPerStep: numOrNull(r.completion_tokens_per_step),
    latencyMsPerStep: numOrNull(r.latency_ms_per_step),
  };
}

/** The report numbers of one data set (or some of its campaigns). */
export async function evaluateDataset(db: DatasetDb, opts: EvaluateOptions = {}): Promise<EvaluationSide> {
  const { ok, scored, rule } = await successSql(db);
  const usage = await usageSql(db);
  const where = opts.campaigns && opts.campaigns.length > 0 ? ` WHERE campaign_id IN (${opts.campaigns.map(sqlString).join(", ")})` : "";
  const sql = {
    campaigns: groupSql(["campaign_id", "policy_name"], ok, scored, usage, where),
    byTask: groupSql(["campaign_id", "policy_name", "task_id"], ok, scored, usage, where),
    byGoal: groupSql(["campaign_id", "policy_name", "task_id", "goal"], ok, scored, usage, where),
    outcomes: `SELECT campaign_id, outcome, cause, count(*) AS episodes FROM episodes${where} GROUP BY ALL ORDER BY campaign_id, episodes DESC, outcome, cause`,
  };
  const [campaigns, byTask, byGoal, outcomes] = await Promise.all([db.rows(sql.campaigns), db.rows(sql.byTask), db.rows(sql.byGoal), db.rows(sql.outcomes)]);
  return {
    label: opts.label ?? db.dir,
    campaigns: campaigns.map(rowOf),
    byTask: byTask.map(rowOf),
    byGoal: byGoal.map(rowOf),
    outcomes: outcomes.map((r) => ({ campaignId: String(r.campaign_id), outcome: String(r.outcome), cause: String(r.cause), episodes: num(r.episodes) })),
    sql,
    successRule: rule,
  };
}

/** Per task: the two sides' episodes pooled over their campaigns, other − base with Newcombe's interval. */
export function compareSides(base: EvaluationSide, other: EvaluationSide): TaskDifference[] {
  const pool = (rows: EvaluationRow[]) => {
    const m = new Map<string, { episodes: number; successes: number }>();
    for (const r of rows) {
      const t = m.get(r.taskId) ?? { episodes: 0, successes: 0 };
      t.episodes += r.episodes;
      t.successes += r.successes;
      m.set(r.taskId, t);
    }
    return m;
  };
  const a = pool(base.byTask);
  const b = pool(other.byTask);
  const out: TaskDifference[] = [];
  for (const [taskId, x] of [...a].sort(([p], [q]) => p.localeCompare(q))) {
    const y = b.get(taskId);
    if (!y) continue;
    out.push({
      taskId,
      base: { ...x, rate: x.successes / x.episodes },
      other: { ...y, rate: y.successes / y.episodes },
      ...rateDifference(x, y),
    });
  }
  return out;
}

/** What one side of a report reads: a data set folder, or Avro files and folders; optionally some campaigns only. */
export interface EvaluationInput {
  paths: readonly string[];
  campaigns?: readonly string[];
  label?: string;
}

/**
 * Evaluates one side: a data set directly, Avro trajectories through a temporary export (under `workDir`,
 * removed afterwards) so the numbers still come from the same SQL.
 */
export async function evaluateInput(input: EvaluationInput, opts: { workDir?: string; memoryBudgetBytes?: number } = {}): Promise<EvaluationSide> {
  const label = input.label ?? `${input.paths.join(", ")}${input.campaigns?.length ? ` (campaign ${input.campaigns.join(", ")})` : ""}`;
  const only = input.paths.length === 1 ? input.paths[0]! : undefined;
  if (only && existsSync(path.join(only, "manifest.json"))) {
    const db = await openDatasetDb(only);
    try {
      return await evaluateDataset(db, { label, ...(input.campaigns ? { campaigns: input.campaigns } : {}) });
    } finally {
      db.close();
    }
  }
  const tmp = await mkdtemp(path.join(opts.workDir ?? os.tmpdir(), "farm-report-"));
  try {
    await exportParquet(input.paths, tmp, { compression: "snappy", ...(opts.memoryBudgetBytes !== undefined ? { memoryBudgetBytes: opts.memoryBudgetBytes } : {}) });
    const db = await openDatasetDb(tmp);
    try {
      return await evaluateDataset(db, { label, ...(input.campaigns ? { campaigns: input.campaigns } : {}) });
    } finally {
      db.close();
    }
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/** A whole report: one side, or two with the per-task differences. */
export async function evaluate(base: EvaluationInput, other: EvaluationInput | undefined, opts: { workDir?: string; title?: string; memoryBudgetBytes?: number } = {}): Promise<Evaluation> {
  const a = await evaluateInput(base, opts);
  const b = other ? await evaluateInput(other, opts) : undefined;
  return {
    title: opts.title ?? (b ? `${a.label} vs ${b.label}` : a.label),
    generatedAt: new Date().toISOString(),
    z: WILSON_Z,
    base: a,
    ...(b ? { other: b, differences: compareSides(a, b) } : {}),
  };
}
