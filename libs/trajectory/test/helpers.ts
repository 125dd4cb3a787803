/** Shared test helpers: temporary folders, the external Avro readers (required, never skipped). */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { after } from "node:test";
import { TrajectoryWriter, syntheticEpisode, type CodecName, type EpisodeRecord, type TrajectoryWriterOptions } from "@farm/trajectory";

export const PYTHON = "/usr/bin/python3";

export async function tempDir(prefix = "traj-"): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Fails (not skips) when an interop reader is missing: CI installs them with deploy/bootstrap.sh. */
export function requireInteropTools(): void {
  const missing: string[] = [];
  if (spawnSync("avrocat", ["--help"]).error) missing.push("avrocat (Debian package avro-bin)");
  if (!existsSync(PYTHON)) missing.push(`${PYTHON}`);
  else {
    const r = spawnSync(PYTHON, ["-c", "import avro.datafile, snappy"]);
    if (r.status !== 0) missing.push("python3-avro / python3-snappy (import avro.datafile, snappy failed)");
  }
  if (missing.length) throw new Error(`interop readers missing: ${missing.join(", ")}; run deploy/bootstrap.sh (CI installs them)`);
}

export function avrocat(file: string): unknown[] {
  const out = execFileSync("avrocat", [file], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
  return out.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l) as unknown);
}

export function python(script: string, ...args: string[]): string {
  return execFileSync(PYTHON, ["-c", script, ...args], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
}

export async function writeEpisodes(
  outDir: string,
  records: EpisodeRecord[],
  opts: Partial<TrajectoryWriterOptions> & { codec?: CodecName } = {},
): Promise<TrajectoryWriter> {
  const w = await TrajectoryWriter.open({ outDir, writerId: "w1", ...opts });
  for (const r of records) await w.append(r);
  await w.close();
  return w;
}

export function episodes(n: number, o: Parameters<typeof syntheticEpisode>[1] = {}, first = 0): EpisodeRecord[] {
  return Array.from({ length: n }, (_, i) => syntheticEpisode(first + i, { steps: 20, ...o }));
}
