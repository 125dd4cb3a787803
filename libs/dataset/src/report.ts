/** The human-readable summary `farm trajectories export --format parquet` prints. */
import type { ExportReport } from "./export.ts";

export function formatExportReport(r: ExportReport): string {
  const lines = [
    `exported ${r.episodes} episodes, ${r.steps} steps, ${r.frames} frames into ${r.shardsWritten} new shard(s) (${(r.bytesWritten / 1e6).toFixed(2)} MB); data set now has ${r.shardsTotal} shard(s): ${r.outDir}`,
    `skipped: ${r.corruptFiles.length} unreadable file(s), ${r.invalidEpisodes.length} invalid episode(s), ${r.duplicates.length} duplicate(s), ${r.alreadyExported} already exported`,
    `extras stored as null (did not fit their column): ${r.extrasUnrepresentable}; shards over the size limit (one episode alone larger): ${r.oversizedShards}`,
    `time ${r.seconds.toFixed(2)} s, ${(r.steps / Math.max(r.seconds, 1e-9)).toFixed(0)} rows/s, ${(r.bytesWritten / 1e6 / Math.max(r.seconds, 1e-9)).toFixed(1)} MB/s, peak RSS ${r.peakRssMb.toFixed(0)} MB`,
  ];
  for (const f of r.corruptFiles) lines.push(`unreadable file skipped: ${f.file}: ${f.error}`);
  for (const e of r.invalidEpisodes.slice(0, 50)) lines.push(`invalid episode skipped: ${e.episodeId} in ${e.file}: ${e.reason}`);
  if (r.invalidEpisodes.length > 50) lines.push(`… ${r.invalidEpisodes.length - 50} more invalid episodes (use --json)`);
  for (const d of r.duplicates.slice(0, 20)) lines.push(`duplicate skipped: ${d.episodeId} in ${d.file}`);
  return lines.join("\n");
}
