/**
 * `farm report PATH [--campaign ID] [--compare OTHER] --out report.html`: the evaluation report (success per
 * campaign, task and goal with Wilson 95 % intervals, steps, time, invalid answers, tokens and model latency per
 * step, outcomes and causes; with --compare the difference per task) as one self-contained HTML file that opens
 * offline. PATH is a data set folder or a campaign's trajectory files/folders; OTHER is another such path, or a
 * campaign id inside PATH. The numbers come from SQL over the data set (shown in the page).
 */
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Command } from "commander";
import { terminalSafe } from "@farm/terminal-text";
import { cliConfig } from "../config.ts";
import type { CommandModule } from "./types.ts";

interface ReportOpts {
  campaign: string[];
  compare?: string;
  out: string;
  viewerUrl: string;
  title?: string;
}

const collect = (v: string, prev: string[]) => [...prev, v];
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

export const reportCommand: CommandModule = {
  register(program: Command) {
    program
      .command("report")
      .description("an evaluation report as one self-contained HTML file: success rates with Wilson 95 % intervals per campaign, task and goal, steps, time, invalid answers, tokens and latency per step, outcomes; --compare: the difference per task")
      .argument("<paths...>", "a data set folder (farm trajectories export --format parquet) or a campaign's trajectory files/folders")
      .option("--campaign <id>", "only this campaign of PATH (repeatable)", collect, [] as string[])
      .option("--compare <other>", "compare with another data set / trajectory folder, or with a campaign id inside PATH")
      .requiredOption("--out <file>", "the HTML file to write")
      .option("--viewer-url <url>", "where rows link to: a `farm trajectories view` or the scheduler ('' for no links)", "http://127.0.0.1:8421/")
      .option("--title <text>", "the report's title")
      .action(async (paths: string[], o: ReportOpts) => {
        const [{ evaluate }, { reportHtml }] = await Promise.all([import("@farm/dataset"), import("@farm/scheduler")]);
        const missing = paths.find((p) => !existsSync(p));
        if (missing !== undefined) {
          throw new Error(`${JSON.stringify(missing.slice(0, 200))} does not exist: give a data set folder or the trajectory folder the campaign's workers wrote (their --out), and --campaign ID to report on one campaign of it`);
        }
        const base = { paths, ...(o.campaign.length ? { campaigns: o.campaign } : {}) };
        let other: { paths: string[]; campaigns?: string[]; label?: string } | undefined;
        if (o.compare !== undefined) {
          other = existsSync(o.compare) ? { paths: [o.compare] } : { paths, campaigns: [o.compare], label: `campaign ${o.compare}` };
          if (!existsSync(o.compare) && !/^[A-Za-z0-9][A-Za-z0-9._:@+=-]{0,299}$/.test(o.compare)) throw new Error(`--compare ${JSON.stringify(o.compare.slice(0, 100))}: neither a path nor a campaign id`);
        }
        const evaluation = await evaluate(base, other, { ...(o.title ? { title: o.title } : {}), ...cliConfig().trajectoryRead });
        const viewerBase = o.viewerUrl === "" ? null : o.viewerUrl.endsWith("/") ? o.viewerUrl : `${o.viewerUrl}/`;
        const html = reportHtml(evaluation, { inline: true, viewerBase, viewerHint: viewerBase ? `start it with: npx farm trajectories view ${paths.join(" ")}` : undefined });
        await mkdir(path.dirname(path.resolve(o.out)), { recursive: true });
        await writeFile(o.out, html);
        const lines = [`report: ${o.out} (${(html.length / 1024).toFixed(0)} KiB, self-contained)`, evaluation.base.successRule];
        for (const s of [evaluation.base, ...(evaluation.other ? [evaluation.other] : [])]) {
          lines.push(`${s.label}:`);
          for (const r of s.byTask) lines.push(`  ${r.campaignId}  ${r.taskId}  ${r.successes}/${r.episodes} = ${pct(r.rate)}  [${pct(r.low)}, ${pct(r.high)}]`);
        }
        for (const d of evaluation.differences ?? []) lines.push(`difference ${d.taskId}: ${pct(d.diff)} [${pct(d.low)}, ${pct(d.high)}]${d.differs ? "  differs beyond noise" : ""}`);
        process.stdout.write(`${lines.map((l) => terminalSafe(l)).join("\n")}\n`);
      });
  },
};
