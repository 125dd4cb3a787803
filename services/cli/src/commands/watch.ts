/**
 * `farm watch <campaign>`: progress until the campaign finishes, then the summary as JSON on stdout.
 * On a TTY stderr shows a redrawn progress bar; otherwise one plain line per change. The rate is
 * measured over the last ~10 s of samples (the campaign's lifetime mean until then); ETA follows it.
 * Exit code: 0 when completed or cancelled, 1 when the campaign failed.
 */
import type { Command } from "commander";
import type { CampaignStatus } from "@farm/scheduler";
import { addAccessOptions, withCampaignClient, type AccessOptions } from "./campaign-access.ts";
import { parseIntOption } from "./options.ts";
import { sleep } from "@farm/time";

const RATE_WINDOW_MS = 10_000;

/** `[#####-----]  12/40  30.0%  3.2 ep/s  ETA 9s  running 4  failed 0` */
export function formatProgress(s: CampaignStatus, ratePerSec: number, barWidth = 30): string {
  const frac = s.episodes > 0 ? s.finished / s.episodes : 0;
  const filled = Math.min(barWidth, Math.round(frac * barWidth));
  const remaining = s.episodes - s.finished;
  const eta = ratePerSec > 0 && s.state === "running" ? `ETA ${formatDuration(remaining / ratePerSec)}` : "ETA -";
  return `[${"#".repeat(filled)}${"-".repeat(barWidth - filled)}] ${s.finished}/${s.episodes} ${(frac * 100).toFixed(1)}% ${ratePerSec.toFixed(2)} ep/s ${eta} running ${s.running} failed ${s.failed} ${s.state}`;
}

export function formatDuration(sec: number): string {
  if (!Number.isFinite(sec)) return "-";
  const s = Math.round(sec);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

export function registerWatch(program: Command): void {
  addAccessOptions(
    program
      .command("watch")
      .description("show a campaign's progress (episodes/s, ETA) until it finishes, then print its summary")
      .argument("<campaign>", "campaign id")
      .option("--interval-ms <ms>", "poll period", "1000"),
  ).action(async (id: string, o: AccessOptions & { intervalMs: string }) => {
    const interval = parseIntOption("interval-ms", o.intervalMs, 50) ?? 1000;
    const tty = process.stderr.isTTY === true;
    const final = await withCampaignClient(o, async (c) => {
      const samples: Array<{ t: number; finished: number }> = [];
      let last = "";
      for (;;) {
        const s = await c.status(id);
        const now = Date.now();
        samples.push({ t: now, finished: s.finished });
        while (samples.length > 2 && now - (samples[0]?.t ?? now) > RATE_WINDOW_MS) samples.shift();
        const first = samples[0];
        const span = first ? (now - first.t) / 1000 : 0;
        const rate = span >= 1 && first ? (s.finished - first.finished) / span : s.episodesPerSec;
        const line = formatProgress(s, rate);
        if (tty) process.stderr.write(`\r\x1b[2K${line}`);
        else if (line.replace(/ [\d.]+ ep\/s ETA \S+/, "") !== last.replace(/ [\d.]+ ep\/s ETA \S+/, "")) process.stderr.write(`${line}\n`);
        last = line;
        if (s.state !== "running" && s.finishedAt !== undefined) {
          if (tty) process.stderr.write("\n");
          return s;
        }
        await sleep(interval);
      }
    });
    process.stdout.write(`${JSON.stringify(final.summary ?? final)}\n`);
    if (final.state === "failed") process.exitCode = 1;
  });
}
