/**
 * First pass over the inputs, without frames: which episodes to export, which to skip (and why), and
 * the extras columns. Reading every file to its end here means a corrupt file is skipped whole (never
 * half exported) and the schema is known before the first shard is written.
 */
import type { Schema } from "avsc";
import { episodeIdOf, episodeSchema, listTrajectoryFiles, openTrajectoryFile, type StoredEpisode } from "@farm/trajectory";
import { POLICY_USAGE_EXTRAS } from "@farm/episode/policy-usage";
import { ExtrasSpec, columnFor } from "./extras-spec.ts";
import { coerceError } from "@farm/errors";

export interface SkippedFile {
  file: string;
  error: string;
}

export interface SkippedEpisode {
  episodeId: string;
  file: string;
  reason: string;
}

export interface ExportPlan {
  /** Readable files in input order, each with the positions (0-based record numbers) of the records to export. */
  files: { file: string; take: Set<number> }[];
  episodes: number;
  extras: ExtrasSpec;
  corruptFiles: SkippedFile[];
  invalidEpisodes: SkippedEpisode[];
  /** Records whose id an earlier record of this run already holds (a retry's duplicate). */
  duplicates: SkippedEpisode[];
  /** Episodes already in the data set (incremental). */
  alreadyExported: number;
}

/** The episode schema without frames (steps' and the initial one): the first pass skips those bytes instead of copying them. */
function frameless(): Schema {
  const s = structuredClone(episodeSchema) as unknown as { fields: { name: string; type: unknown }[] };
  s.fields = s.fields.filter((f) => f.name !== "initialFrame");
  const steps = s.fields.find((f) => f.name === "steps")!.type as { items: { fields: { name: string }[] } };
  steps.items.fields = steps.items.fields.filter((f) => f.name !== "frame");
  return s as unknown as Schema;
}

/** Why an episode cannot be exported as it is, or undefined. */
export function invalidReason(e: StoredEpisode): string | undefined {
  if (e.episodeId !== episodeIdOf(e.campaignId, e.episodeIndex)) return `episodeId is not ${JSON.stringify(episodeIdOf(e.campaignId, e.episodeIndex))}`;
  if (!e.taskId) return "taskId is empty";
  for (let i = 0; i < e.steps.length; i++) {
    const s = e.steps[i]!;
    if (s.index !== i + 1) return `step ${i + 1} has index ${s.index} (steps must be numbered 1..n)`;
    if (!Number.isFinite(s.reward)) return `step ${s.index}: reward ${s.reward} is not finite`;
    if (!Number.isSafeInteger(s.timeOffsetMs)) return `step ${s.index}: timeOffsetMs ${s.timeOffsetMs} is not an integer`;
  }
  if (Number.isNaN(e.startedAt.getTime()) || Number.isNaN(e.endedAt.getTime())) return "startedAt/endedAt is not a valid time";
  return undefined;
}

export interface PlanOptions {
  /** Ids already in the data set (incremental export): skipped. */
  exported?: ReadonlySet<string>;
  /** Extras columns of the existing data set (incremental export): new names do not fit. */
  extras?: ExtrasSpec;
  /** Memory budget per file read (default 256 MiB). */
  memoryBudgetBytes?: number;
}

export async function planExport(inputs: readonly string[], o: PlanOptions = {}): Promise<ExportPlan> {
  const { files } = await listTrajectoryFiles(inputs);
  const grow = !o.extras;
  const plan: ExportPlan = {
    files: [], episodes: 0, extras: o.extras ?? policyUsageColumns(), corruptFiles: [], invalidEpisodes: [], duplicates: [], alreadyExported: 0,
  };
  const seen = new Set<string>();
  const readerSchema = frameless();
  for (const file of files) {
    // Streamed: only ids and reasons are kept; the file's findings count only if it reads to the end.
    const before = plan.extras.columns();
    const take = new Set<number>();
    const ids = new Set<string>();
    let position = -1;
    const invalid: SkippedEpisode[] = [];
    const duplicates: SkippedEpisode[] = [];
    let already = 0;
    try {
      const opened = await openTrajectoryFile(file, { readerSchema, ...(o.memoryBudgetBytes === undefined ? {} : { memoryBudgetBytes: o.memoryBudgetBytes }) });
      for await (const e of opened.episodes) {
        position++;
        if (o.exported?.has(e.episodeId)) {
          already++;
          continue;
        }
        if (seen.has(e.episodeId) || ids.has(e.episodeId)) {
          duplicates.push({ episodeId: e.episodeId, file, reason: "duplicate id (an earlier record holds it)" });
          continue;
        }
        const reason = invalidReason(e) ?? firstMisfit(e, plan.extras, grow);
        if (reason) {
          invalid.push({ episodeId: e.episodeId, file, reason });
          continue;
        }
        if (grow) for (const s of e.steps) plan.extras.add(s.extras);
        take.add(position);
        ids.add(e.episodeId);
      }
    } catch (err) {
      plan.corruptFiles.push({ file, error: coerceError(err).message });
      plan.extras = ExtrasSpec.from(before); // columns seen only in the unreadable file do not count
      continue;
    }
    plan.alreadyExported += already;
    plan.invalidEpisodes.push(...invalid);
    plan.duplicates.push(...duplicates);
    for (const id of ids) seen.add(id);
    plan.episodes += take.size;
    if (take.size > 0) plan.files.push({ file, take });
  }
  return plan;
}

/**
 * A full export always has the policy usage columns (extra_policy_prompt_tokens, …, what the runner logs
 * for policies that report usage), declared by no task's extras_spec: the schema does not depend on
 * whether the first episodes came from such a policy, and an incremental run can add agent episodes.
 */
function policyUsageColumns(): ExtrasSpec {
  return ExtrasSpec.from(Object.values(POLICY_USAGE_EXTRAS).map((x) => columnFor(x.name, x.dtype, [])));
}

function firstMisfit(e: StoredEpisode, spec: ExtrasSpec, grow: boolean): string | undefined {
  // Check against the spec grown by this episode's own earlier steps too (a name changing dtype mid-episode).
  const local = ExtrasSpec.from(spec.columns());
  for (const s of e.steps) {
    const m = local.misfit(s.extras, grow);
    if (m) return `step ${s.index}: ${m}`;
    if (grow) local.add(s.extras);
  }
  return undefined;
}
