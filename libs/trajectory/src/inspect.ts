/** Summaries of trajectory files: counts, outcomes, reward statistics, duplicates, schema versions. */
import { stat } from "node:fs/promises";
import { listTrajectoryFiles, openTrajectoryFile } from "./reader.ts";
import type { ReadLimitOptions } from "./read-limits.ts";
import { terminalSafe } from "@farm/terminal-text";
import type { StoredEpisode } from "./types.ts";
import { coerceError } from "@farm/errors";
import { groupStats, summarizeGroups, type GroupMemberFacts, type GroupsSummary } from "./group-stats.ts";

export interface DuplicateOccurrence {
  attempt: number;
  file: string;
  outcome: string;
  cause: string;
}

export interface DuplicateEpisode {
  episodeId: string;
  occurrences: DuplicateOccurrence[];
}

/** Minimal identity needed to find duplicates; a StoredEpisode fits. */
type Identified = Pick<StoredEpisode, "episodeId" | "attempt" | "file" | "outcome" | "cause">;

/** Groups records by episodeId and returns the ids seen more than once (sorted by id). */
export function findDuplicates(records: Iterable<Identified>): DuplicateEpisode[] {
  const seen = new Map<string, DuplicateOccurrence[]>();
  for (const r of records) {
    const occ = { attempt: r.attempt, file: r.file, outcome: r.outcome, cause: r.cause };
    const list = seen.get(r.episodeId);
    if (list) list.push(occ);
    else seen.set(r.episodeId, [occ]);
  }
  return [...seen]
    .filter(([, occ]) => occ.length > 1)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([episodeId, occurrences]) => ({ episodeId, occurrences }));
}

export interface TrajectorySummary {
  files: number;
  bytes: number;
  /** Temporary (unfinished) or hidden files that were not read. */
  skippedFiles: number;
  unreadable: { file: string; error: string }[];
  episodes: number;
  uniqueEpisodes: number;
  steps: number;
  frames: number;
  /** outcome → cause → count */
  outcomes: Record<string, Record<string, number>>;
  reward: { mean: number; min: number; max: number } | null;
  /** schema version → number of files */
  schemaVersions: Record<string, number>;
  /** codec → number of files */
  codecs: Record<string, number>;
  tasks: Record<string, number>;
  duplicates: DuplicateEpisode[];
  /** v3 agent episodes: goal → episodes (goals cut to 200 characters; episodes without a goal are not counted). */
  goals: Record<string, number>;
  /** agent status (complete, infeasible) → episodes. */
  agentStatuses: Record<string, number>;
  /** Answers recorded as invalid, over all episodes. */
  invalidActions: number;
  /** The agents' answers (first 100, each cut to 200 characters). */
  answers: { episodeId: string; answer: string }[];
  /** v4 scored episodes (a task instance's final score), by task: scored = success recorded or score error. */
  scores: Record<string, TaskScores>;
  /** Why scores could not be computed (first 100, each cut to 200 characters). */
  scoreErrors: { episodeId: string; error: string }[];
  /** v5 grouped episodes (GRPO): complete groups, uniform ones (all rewards equal), incomplete ones; absent without groups. */
  groups?: GroupsSummary;
}

/** A task's scored episodes: `successes` have success 1, `meanSuccess` over those with a success, `errors` have a score error. */
export interface TaskScores {
  scored: number;
  successes: number;
  meanSuccess: number;
  errors: number;
}

const TEXT_CUT = 200;
const MAX_ANSWERS = 100;

function cut(text: string): string {
  return text.length > TEXT_CUT ? `${text.slice(0, TEXT_CUT)}…` : text;
}

interface EpisodeFacts extends Identified {
  taskId: string;
  totalReward: number;
  steps: number;
  frames: number;
  goal?: string;
  agentStatus?: string;
  answer?: string;
  invalidActions: number;
  success?: number;
  scoreError?: string;
  campaignId: string;
  groupIndex?: number;
  groupMember?: number;
  groupSize?: number;
}

function factsOf(e: StoredEpisode): EpisodeFacts {
  let frames = 0;
  for (const st of e.steps) if (st.frame) frames++;
  const { episodeId, attempt, file, outcome, cause, taskId, totalReward } = e;
  const facts: EpisodeFacts = { episodeId, attempt, file, outcome, cause, taskId, totalReward, steps: e.steps.length, frames, invalidActions: e.invalidActions ?? 0, campaignId: e.campaignId };
  if (e.groupIndex !== undefined) Object.assign(facts, { groupIndex: e.groupIndex, groupMember: e.groupMember, groupSize: e.groupSize });
  if (e.goal) facts.goal = cut(e.goal);
  if (e.agentStatus) facts.agentStatus = e.agentStatus;
  if (e.answer !== undefined) facts.answer = cut(e.answer);
  if (e.success !== undefined) facts.success = e.success;
  if (e.scoreError !== undefined) facts.scoreError = cut(e.scoreError);
  return facts;
}

/** Reads every visible file under the paths once and summarises it; unreadable files are listed, not fatal. */
export async function inspectTrajectories(pathsOrDirs: readonly string[], read: ReadLimitOptions = {}): Promise<TrajectorySummary> {
  const { files, skipped } = await listTrajectoryFiles(pathsOrDirs);
  const s: TrajectorySummary = {
    files: files.length,
    bytes: 0,
    skippedFiles: skipped.length,
    unreadable: [],
    episodes: 0,
    uniqueEpisodes: 0,
    steps: 0,
    frames: 0,
    outcomes: {},
    reward: null,
    schemaVersions: {},
    codecs: {},
    tasks: {},
    duplicates: [],
    goals: {},
    agentStatuses: {},
    invalidActions: 0,
    answers: [],
    scores: {},
    scoreErrors: [],
  };
  const scores = new Map<string, TaskScores & { successSum: number }>();
  const identities: Identified[] = [];
  const grouped: GroupMemberFacts[] = [];
  // Keys come from files (task ids, causes): count in Maps, never on plain objects (`__proto__`, `constructor`).
  const schemaVersions = new Map<string, number>();
  const codecs = new Map<string, number>();
  const tasks = new Map<string, number>();
  const goals = new Map<string, number>();
  const statuses = new Map<string, number>();
  const outcomes = new Map<string, Map<string, number>>();
  const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
  let rewardSum = 0;
  let min = Infinity;
  let max = -Infinity;
  for (const file of files) {
    s.bytes += (await stat(file)).size;
    // Count a file's episodes only if it reads to the end, so totals never mix in half a file.
    // Keep only small per-episode facts: frames of many files must not pile up in memory.
    const facts: EpisodeFacts[] = [];
    try {
      const opened = await openTrajectoryFile(file, read);
      for await (const e of opened.episodes) facts.push(factsOf(e));
      const v = String(opened.schemaVersion);
      bump(schemaVersions, v);
      bump(codecs, opened.info.codec);
    } catch (err) {
      s.unreadable.push({ file, error: coerceError(err).message });
      continue;
    }
    for (const e of facts) {
      s.episodes++;
      s.steps += e.steps;
      s.frames += e.frames;
      let byCause = outcomes.get(e.outcome);
      if (!byCause) outcomes.set(e.outcome, (byCause = new Map()));
      bump(byCause, e.cause);
      bump(tasks, e.taskId);
      if (e.goal !== undefined) bump(goals, e.goal);
      if (e.agentStatus !== undefined) bump(statuses, e.agentStatus);
      if (e.answer !== undefined && s.answers.length < MAX_ANSWERS) s.answers.push({ episodeId: e.episodeId, answer: e.answer });
      s.invalidActions += e.invalidActions;
      if (e.success !== undefined || e.scoreError !== undefined) {
        let t = scores.get(e.taskId);
        if (!t) scores.set(e.taskId, (t = { scored: 0, successes: 0, meanSuccess: 0, errors: 0, successSum: 0 }));
        t.scored++;
        if (e.scoreError !== undefined) {
          t.errors++;
          if (s.scoreErrors.length < MAX_ANSWERS) s.scoreErrors.push({ episodeId: e.episodeId, error: e.scoreError });
        } else {
          t.successSum += e.success!;
          if (e.success === 1) t.successes++;
        }
      }
      rewardSum += e.totalReward;
      min = Math.min(min, e.totalReward);
      max = Math.max(max, e.totalReward);
      identities.push(e);
      if (e.groupIndex !== undefined) grouped.push(e);
    }
  }
  // Object.fromEntries defines own properties: a key named `__proto__` stays data.
  s.schemaVersions = Object.fromEntries(schemaVersions);
  s.codecs = Object.fromEntries(codecs);
  s.tasks = Object.fromEntries(tasks);
  s.goals = Object.fromEntries(goals);
  s.agentStatuses = Object.fromEntries(statuses);
  s.scores = Object.fromEntries([...scores].map(([task, { successSum, ...t }]) => [task, { ...t, meanSuccess: t.scored > t.errors ? successSum / (t.scored - t.errors) : 0 }]));
  s.outcomes = Object.fromEntries([...outcomes].map(([o, m]) => [o, Object.fromEntries(m)]));
  if (s.episodes > 0) s.reward = { mean: rewardSum / s.episodes, min, max };
  s.duplicates = findDuplicates(identities);
  if (grouped.length > 0) s.groups = summarizeGroups(groupStats(grouped));
  s.uniqueEpisodes = s.episodes - s.duplicates.reduce((n, d) => n + d.occurrences.length - 1, 0);
  return s;
}

/** The human-readable form printed by `farm trajectories inspect`. */
export function formatSummary(s: TrajectorySummary): string {
  const lines: string[] = [];
  const kv = (o: Record<string, number>) => Object.entries(o).map(([k, v]) => `${k}=${v}`).join(" ") || "-";
  lines.push(`files: ${s.files} (${(s.bytes / 1024 / 1024).toFixed(2)} MiB); skipped temporary/hidden: ${s.skippedFiles}; unreadable: ${s.unreadable.length}`);
  lines.push(`schema versions (files): ${kv(s.schemaVersions)}; codecs (files): ${kv(s.codecs)}`);
  lines.push(`episodes: ${s.episodes} (unique ${s.uniqueEpisodes}); steps: ${s.steps}; frames: ${s.frames}`);
  lines.push(`tasks: ${kv(s.tasks)}`);
  for (const [outcome, causes] of Object.entries(s.outcomes)) lines.push(`${outcome}: ${kv(causes)}`);
  lines.push(s.reward ? `reward: mean=${fmt(s.reward.mean)} min=${fmt(s.reward.min)} max=${fmt(s.reward.max)}` : "reward: -");
  const goals = Object.entries(s.goals);
  if (goals.length > 0) {
    lines.push(`goals: ${goals.length}`);
    for (const [goal, n] of goals.slice(0, 20)) lines.push(`  ${JSON.stringify(goal)}: ${n}`);
    if (goals.length > 20) lines.push(`  … ${goals.length - 20} more (use --json)`);
  }
  if (Object.keys(s.agentStatuses).length > 0 || s.invalidActions > 0 || s.answers.length > 0) {
    lines.push(`agent status: ${kv(s.agentStatuses)}; invalid actions: ${s.invalidActions}; answers: ${s.answers.length}`);
    for (const a of s.answers.slice(0, 20)) lines.push(`  ${a.episodeId}: answer ${JSON.stringify(a.answer)}`);
    if (s.answers.length > 20) lines.push(`  … ${s.answers.length - 20} more (use --json)`);
  }
  const scored = Object.entries(s.scores);
  if (scored.length > 0) {
    const all = scored.reduce((a, [, t]) => ({ scored: a.scored + t.scored, successes: a.successes + t.successes, errors: a.errors + t.errors }), { scored: 0, successes: 0, errors: 0 });
    const rate = (t: { scored: number; successes: number; errors: number }) => (t.scored > t.errors ? fmt(t.successes / (t.scored - t.errors)) : "-");
    lines.push(`scores: ${all.scored} scored episodes; success rate ${rate(all)} (success = 1 among those scored without error); score errors: ${all.errors}`);
    for (const [task, t] of scored.slice(0, 50)) lines.push(`  ${task}: scored=${t.scored} success_rate=${rate(t)} mean_success=${fmt(t.meanSuccess)} errors=${t.errors}`);
    for (const e of s.scoreErrors.slice(0, 20)) lines.push(`  ${e.episodeId}: score error ${JSON.stringify(e.error)}`);
    if (s.scoreErrors.length > 20) lines.push(`  … ${s.scoreErrors.length - 20} more score errors (use --json)`);
  }
  if (s.groups) {
    const g = s.groups;
    lines.push(`groups: ${g.complete} complete (${g.uniform} uniform: all rewards equal), ${g.incomplete} incomplete; mean reward std ${g.meanStd === null ? "-" : fmt(g.meanStd)}`);
    for (const x of g.groups.slice(0, 20)) lines.push(`  ${x.campaignId} group ${x.groupIndex}: ${x.members}/${x.size} mean=${fmt(x.mean)} std=${fmt(x.std)}${x.uniform ? " uniform" : ""}`);
  }
  lines.push(`duplicates: ${s.duplicates.length}`);
  for (const d of s.duplicates.slice(0, 20)) {
    lines.push(`  ${d.episodeId}: ${d.occurrences.map((o) => `attempt ${o.attempt} ${o.outcome}/${o.cause} in ${o.file}`).join("; ")}`);
  }
  if (s.duplicates.length > 20) lines.push(`  … ${s.duplicates.length - 20} more (use --json)`);
  for (const u of s.unreadable) lines.push(u.error.startsWith(`${u.file}: `) ? `unreadable: ${u.error}` : `unreadable: ${u.file}: ${u.error}`);
  // Names, ids and messages come from files: no terminal control sequences reach the screen.
  return lines.map(terminalSafe).join("\n");
}

function fmt(x: number): string {
  return Number.isInteger(x) ? String(x) : x.toFixed(4);
}
