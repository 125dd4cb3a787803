/**
 * `farm bench policy-batch [--devices 32] [--episodes 32] [--max-steps 30] [--window-ms 5]`: one worker host
 * with N simulated emulators runs the same Classic 2048 campaign twice against the reference Python policy
 * server (clients/python): once unbatched (`http:…/act`, one request per device step) and once batched
 * (`http-batch:…/batch`, the host's batcher collects steps for at most --window-ms). The server counts the
 * requests and step items it receives; the campaign summaries give the steps. Pixels are not sent (the
 * reference agent does not look; `--pixels png|rgb` to include them).
 * Last line: `devices=<n> unbatched_requests_per_step=<a> batched_requests_per_step=<b> unbatched_steps_s=<c> batched_steps_s=<d>`.
 * Goal: b ≤ 0.1.
 */
import { intOpt } from "./options.ts";
import { startPolicyFarm, type PolicyFarm } from "./policy-farm.ts";
import type { BenchOptions, Scenario } from "./scenario.ts";
import { sleep } from "@farm/time";

interface ModeResult {
  steps: number;
  requests: number;
  stepItems: number;
  wallSec: number;
  completed: number;
}

async function runCampaign(farm: PolicyFarm, id: string, policy: string, episodes: number, maxSteps: number): Promise<ModeResult> {
  const before = await farm.policyServer.stats();
  const t0 = performance.now();
  const post = await fetch(`${farm.schedulerUrl}/campaigns`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ id, taskId: farm.taskId, episodes, policy, options: { maxEpisodeSteps: maxSteps } }),
  });
  if (post.status !== 201) throw new Error(`submit ${id}: HTTP ${post.status} ${await post.text()}`);
  let st: { state: string; completed: number; summary?: { totalSteps: number } };
  for (;;) {
    await sleep(100);
    st = (await (await fetch(`${farm.schedulerUrl}/campaigns/${id}`)).json()) as typeof st;
    if (st.state !== "running") break;
  }
  const wallSec = (performance.now() - t0) / 1000;
  const after = await farm.policyServer.stats();
  return { steps: st.summary?.totalSteps ?? 0, requests: after.requests - before.requests, stepItems: after.stepItems - before.stepItems, wallSec, completed: st.completed };
}

export const scenario: Scenario = {
  async run(opts: BenchOptions): Promise<void> {
    const devices = intOpt(opts, "devices", 32);
    const episodes = intOpt(opts, "episodes", devices);
    const maxSteps = intOpt(opts, "max-steps", 30);
    const windowMs = intOpt(opts, "window-ms", 5, 0);
    const pixels = typeof opts.pixels === "string" ? opts.pixels : "none";
    if (pixels !== "none" && pixels !== "png" && pixels !== "rgb") throw new Error(`--pixels must be none, png or rgb, got ${pixels}`);
    const out = (line: string) => process.stdout.write(`${line}\n`);
    const farm = await startPolicyFarm({ devices, batchWindowMs: windowMs, pixels });
    try {
      const url = farm.policyServer.url;
      const single = await runCampaign(farm, "bench-unbatched", `http:${url}/act`, episodes, maxSteps);
      const batched = await runCampaign(farm, "bench-batched", `http-batch:${url}/batch`, episodes, maxSteps);
      const f = (x: number, d = 3) => (Number.isFinite(x) ? x.toFixed(d) : "n/a");
      const perStep = (m: ModeResult) => m.requests / m.steps;
      out(`farm bench policy-batch: ${devices} simulated emulators on one worker host, ${episodes} episodes of ${farm.taskId} per mode, max ${maxSteps} steps, reference Python policy server (${url}), batch window ${windowMs} ms, pixels ${pixels}`);
      out("");
      out("| mode | episodes | steps | policy requests | requests per step | steps/s | wall s |");
      out("|---|---|---|---|---|---|---|");
      for (const [name, m] of [["unbatched (http:)", single], ["batched (http-batch:)", batched]] as const) {
        out(`| ${name} | ${m.completed} | ${m.steps} | ${m.requests} | ${f(perStep(m))} | ${f(m.steps / m.wallSec, 1)} | ${f(m.wallSec, 1)} |`);
      }
      out("");
      out("requests include the episode-end messages (one per episode in unbatched mode; they ride in batches in batched mode).");
      out(`devices=${devices} unbatched_requests_per_step=${f(perStep(single))} batched_requests_per_step=${f(perStep(batched))} unbatched_steps_s=${f(single.steps / single.wallSec, 1)} batched_steps_s=${f(batched.steps / batched.wallSec, 1)}`);
    } finally {
      await farm.close();
    }
  },
};
