/**
 * `farm bench partition --cut-s S [--target host|scheduler]`: a campaign on worker hosts in their own
 * network namespaces (the lab), during which one host's link to Redis (or the scheduler's) goes silent for
 * S seconds and then heals. Exactly once across the union of the hosts' folders, what the cut-off host
 * noticed and when it was back. Needs root (network namespaces).
 * Last line: `episodes= distinct= duplicates= missing= quarantined= host_noticed_s= rejoined_s=`.
 */
import { runUntilSignal } from "@farm/lifecycle";
import { intOpt } from "./options.ts";
import type { BenchOptions, Scenario } from "./scenario.ts";
import { NetLab, labUnavailableReason } from "./net-lab/index.ts";
import { LabFarm } from "./net-lab/lab-farm.ts";
import { runPartition } from "./net-lab/partition-run.ts";

export const scenario: Scenario = {
  async run(opts: BenchOptions): Promise<void> {
    const reason = await labUnavailableReason();
    if (reason) throw new Error(`farm bench partition: ${reason}`);
    const cutS = intOpt(opts, "cut-s", 10, 1, 3600);
    const target = opts.target === undefined ? "host" : String(opts.target);
    if (target !== "host" && target !== "scheduler") throw new Error(`--target must be host or scheduler, got ${target}`);
    const hosts = intOpt(opts, "hosts", 2, 2, 8);
    const perHost = intOpt(opts, "devices-per-host", 8);
    const stepMs = intOpt(opts, "step-ms", 100, 0);
    const maxSteps = intOpt(opts, "max-steps", 20);
    const lockMs = intOpt(opts, "lock-ms", 30_000, 1000);
    const episodeS = (stepMs * maxSteps) / 1000;
    // Enough work to outlast the cut on the other hosts.
    const episodes = intOpt(opts, "episodes", Math.ceil(((cutS + 20) / Math.max(0.5, episodeS)) * hosts * perHost));
    const out = (line: string): void => void process.stdout.write(`${line}\n`);
    await runUntilSignal(async (stop) => {
      const lab = await NetLab.create({ hosts });
      stop.addEventListener("abort", () => void lab.close().then(() => process.exit(130)), { once: true });
      try {
        const farm = await LabFarm.start(lab, { devicesPerHost: perHost, rttMs: 0, stepMs, jitterPct: 50, lockMs, hostLogLevel: "info" });
        try {
          const r = await runPartition(farm, { campaignId: "partition", episodes, maxSteps, cutAfterMs: 3000, cutMs: cutS * 1000, target, timeoutMs: (cutS + 600) * 1000 });
          out(`farm bench partition: ${hosts} hosts × ${perHost} devices, ${episodes} episodes of ≤${maxSteps} steps at ${stepMs} ms per step, lock ${lockMs} ms; the ${target === "host" ? "first host's" : "scheduler's"} link to Redis silent for ${cutS} s, then healed`);
          out(`  campaign ${r.state}; the cut-off host finished ${r.hostEpisodesAfterHeal} episodes after the heal${r.schedulerDuringCut !== undefined ? `; the scheduler during the cut: ${r.schedulerDuringCut}` : ""}`);
          out(`episodes=${r.episodes} distinct=${r.distinct} duplicates=${r.duplicates} missing=${r.missing} quarantined=${r.quarantined} host_noticed_s=${r.hostNoticedS.toFixed(1)} rejoined_s=${r.rejoinedS.toFixed(1)}`);
        } finally {
          await farm.close();
        }
      } finally {
        await lab.close();
      }
    });
  },
};
