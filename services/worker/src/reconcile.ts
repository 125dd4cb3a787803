/**
 * Checks a set of trajectory folders (one per host, or one shared) against the farm-wide claims of a
 * campaign: every claimed episode should be exactly one visible file whose checksum the claim names.
 * Lists what is missing (claimed but not found; or, given the episode count, never claimed) and what is
 * extra (a visible file the claim does not name, or of an unclaimed episode). `farm trajectories
 * reconcile` prints it; with `quarantine`, extras whose episode is claimed by another file are moved
 * out of readers' sight (the same safe rule the workers use).
 */
import path from "node:path";
import type { CommitArbiter } from "@farm/queue";
import { listTrajectoryFiles, readEpisodeFile } from "@farm/trajectory";
import { EpisodeStore, fileChecksum } from "./episode-store.ts";
import { coerceError } from "@farm/errors";

export interface ReconcileReport {
  campaignId: string;
  /** Episodes of the campaign, when known. */
  episodes: number | undefined;
  claims: number;
  /** Visible files of this campaign in the folders. */
  files: number;
  /** Files that are the committed record of their episode. */
  matched: number;
  /** Distinct episode indexes with a visible file. */
  distinct: number;
  /** Indexes with more than one visible file. */
  duplicates: number[];
  missing: { index: number; reason: "claimed-file-not-found" | "never-claimed" }[];
  extra: { file: string; index: number; reason: "not-the-claimed-file" | "unclaimed"; quarantined?: boolean }[];
  unreadable: { file: string; error: string }[];
}

export interface ReconcileOptions {
  folders: string[];
  campaignId: string;
  arbiter: CommitArbiter;
  episodes?: number;
  /** Move extras whose episode is claimed by another file into `<folder>/.quarantine/`. */
  quarantine?: boolean;
}

export async function reconcileFolders(o: ReconcileOptions): Promise<ReconcileReport> {
  const claims = await o.arbiter.claims(o.campaignId);
  const report: ReconcileReport = { campaignId: o.campaignId, episodes: o.episodes, claims: claims.size, files: 0, matched: 0, distinct: 0, duplicates: [], missing: [], extra: [], unreadable: [] };
  const seen = new Map<number, number>();
  const matchedIndexes = new Set<number>();
  for (const folder of o.folders) {
    const store = new EpisodeStore(path.resolve(folder), "deflate");
    let files: string[];
    try {
      files = (await listTrajectoryFiles([folder])).files;
    } catch (e) {
      report.unreadable.push({ file: folder, error: coerceError(e).message });
      continue;
    }
    for (const file of files) {
      let rec;
      try {
        rec = await readEpisodeFile(file);
      } catch (e) {
        report.unreadable.push({ file, error: coerceError(e).message });
        continue;
      }
      if (!rec || rec.campaignId !== o.campaignId) continue;
      const index = rec.episodeIndex;
      report.files++;
      seen.set(index, (seen.get(index) ?? 0) + 1);
      const claim = claims.get(index);
      const checksum = await fileChecksum(file);
      if (claim && claim.checksum === checksum) {
        report.matched++;
        matchedIndexes.add(index);
        continue;
      }
      const extra: ReconcileReport["extra"][number] = { file, index, reason: claim ? "not-the-claimed-file" : "unclaimed" };
      if (claim && o.quarantine) {
        extra.quarantined = await store.quarantine(file, checksum);
        if (extra.quarantined) await o.arbiter.count(o.campaignId, "quarantined");
      }
      report.extra.push(extra);
    }
  }
  report.distinct = seen.size;
  report.duplicates = [...seen].filter(([, n]) => n > 1).map(([i]) => i).sort((a, b) => a - b);
  for (const index of [...claims.keys()].sort((a, b) => a - b)) if (!matchedIndexes.has(index)) report.missing.push({ index, reason: "claimed-file-not-found" });
  if (o.episodes !== undefined) for (let i = 0; i < o.episodes; i++) if (!claims.has(i)) report.missing.push({ index: i, reason: "never-claimed" });
  return report;
}

export function formatReconcile(r: ReconcileReport): string {
  const lines = [
    `campaign ${r.campaignId}: ${r.episodes ?? "?"} episodes, ${r.claims} claimed; ${r.files} visible files, ${r.matched} are the committed records, ${r.distinct} distinct episodes`,
    `duplicates: ${r.duplicates.length}${r.duplicates.length ? ` (indexes ${r.duplicates.slice(0, 20).join(", ")}${r.duplicates.length > 20 ? ", …" : ""})` : ""}`,
    `missing: ${r.missing.length}`,
    ...r.missing.slice(0, 50).map((m) => `  ${r.campaignId}-${m.index}: ${m.reason}`),
    `extra: ${r.extra.length}`,
    ...r.extra.slice(0, 50).map((e) => `  ${e.file}: ${e.reason}${e.quarantined ? " (quarantined now)" : ""}`),
  ];
  if (r.unreadable.length) lines.push(`unreadable: ${r.unreadable.length}`, ...r.unreadable.slice(0, 20).map((u) => `  ${u.file}: ${u.error}`));
  return lines.join("\n");
}
