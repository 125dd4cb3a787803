/**
 * `farm bench chaos [--episodes 300] [--devices 3] [--max-steps 20] [--lock-ms 3000] [--stalled-ms 1500] [--window 24] [--keep]`:
 * two simulated hosts on one Redis with AOF, faults injected during a campaign (see chaos.ts), then the
 * union of the hosts' folders is checked. Last line:
 * `episodes=<N> distinct=<N> duplicates=0 missing=0 quarantined=<q> faults=<k>`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { runChaos } from "./chaos.ts";
import { intOpt } from "./options.ts";
import type { BenchOptions, Scenario } from "./scenario.ts";

export const scenario: Scenario = {
  async run(opts: BenchOptions): Promise<void> {
    const out = (line: string) => process.stdout.write(`${line}\n`);
    const dir = mkdtempSync(path.join(os.tmpdir(), "farm-chaos-"));
    let ok = false;
    try {
      const r = await runChaos({
        episodes: intOpt(opts, "episodes", 300),
        devicesPerHost: intOpt(opts, "devices", 3),
        maxSteps: intOpt(opts, "max-steps", 20),
        lockMs: intOpt(opts, "lock-ms", 3000, 1000),
        stalledMs: intOpt(opts, "stalled-ms", 1500, 500),
        window: intOpt(opts, "window", 24),
        timeoutMs: intOpt(opts, "timeout-ms", 30 * 60_000),
        dir,
        log: out,
      });
      const rec = r.reconcile;
      out("");
      out("| figure | value |");
      out("|---|---|");
      out(`| campaign | ${r.campaignState}, ${r.wallSec.toFixed(1)} s |`);
      out(`| visible files (both hosts) | ${r.files} |`);
      out(`| claims / matched / missing / extra (reconcile) | ${rec.claims} / ${rec.matched} / ${rec.missing.length} / ${rec.extra.length} |`);
      out(`| unreadable by avrocat / python avro | ${r.unreadableByAvrocat.length} / ${r.unreadableByPython.length} |`);
      if (r.commits) out(`| commit accounting (farm status) | ${JSON.stringify(r.commits)} |`);
      out(`| faults | ${r.faultLog.join("; ")} |`);
      out("");
      ok = r.duplicates === 0 && r.missing === 0 && r.unreadableByAvrocat.length + r.unreadableByPython.length === 0;
      if (!ok || opts.keep) out(`logs and folders kept in ${dir}`);
      out(`episodes=${r.episodes} distinct=${r.distinct} duplicates=${r.duplicates} missing=${r.missing} quarantined=${r.quarantined} faults=${r.faults}`);
      if (!ok) process.exitCode = 1;
    } finally {
      if (ok && !opts.keep) rmSync(dir, { recursive: true, force: true });
    }
  },
};
