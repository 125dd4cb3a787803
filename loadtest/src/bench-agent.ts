/**
 * `farm bench agent [--devices 16] [--episodes 32] [--delay-ms 50] [--a11y-every 1] [--screenshot off|on] [--profile instant]`:
 * GUI-agent episodes at farm scale. One worker host with N simulated emulators (a child process) runs a campaign of the
 * notes task (tasks/todo_create_note.textproto) with the `llm` policy against the local OpenAI-compatible stand-in
 * (@farm/local-services, in a child process like the simulators), which answers every request after a fixed delay by reading the element list in the prompt
 * (click NEW NOTE, type the title and body into their fields, SAVE). Every step reads the screen as a tree.
 *
 * Per step, from the worker's own metrics (farm_step_phase_duration_seconds, by phase) and the stand-in's request count:
 *   farm overhead = the step's wall time − the model's own time (the stand-in's time on the step's requests)
 *                   − the device's time (action phase + observation phase − the farm's work on the tree).
 * It is what the farm adds to a step: the prompt, the HTTP exchange, parsing the answer, deriving elements, bookkeeping.
 * Last line: `devices= episodes_s= steps_s= farm_overhead_ms_per_step= a11y_ms_per_step= invalid_actions=`.
 * Goal: farm_overhead_ms_per_step ≤ 2 with a11y every step.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startLocalFarm } from "@farm/local-farm";
import { createLogger } from "@farm/log";
import { sleep } from "@farm/time";
import { startLlmChild } from "./llm-child.ts";
import { intOpt, profileOpt } from "./options.ts";
import { procCpuSec } from "./stats.ts";
import { REPO } from "./policy-farm.ts";
import type { BenchOptions, Scenario } from "./scenario.ts";
import { simChildDevices, type SimChild } from "./sim-child.ts";

/** What the stand-in does on the notes task: the first rule whose element is on the screen. */
const NOTES_SOLVER = [{ click_text: "NEW NOTE" }, { type_into: "title_input", text: "milk" }, { type_into: "body_input", text: "2 litres" }, { click_text: "SAVE" }];

/** The key under which the policy latency histogram's sum and count are kept beside the phases. */
const LATENCY = "policy_latency";

interface PhaseSums {
  count: Map<string, number>;
  sum: Map<string, number>;
  uiInvalid: number;
}

/** The step-phase histograms' sums and counts and the invalid UI answers, from the worker's /metrics text. */
function readPhases(text: string): PhaseSums {
  const out: PhaseSums = { count: new Map(), sum: new Map(), uiInvalid: 0 };
  // Series carry the registry's default labels too (service, …): the label of interest is found inside the braces.
  for (const m of text.matchAll(/^farm_step_phase_duration_seconds_(sum|count)\{[^}]*\bphase="([a-z0-9_]+)"[^}]*\} ([0-9.e+-]+)$/gm)) {
    (m[1] === "sum" ? out.sum : out.count).set(m[2]!, Number(m[3]));
  }
  for (const m of text.matchAll(/^farm_policy_latency_seconds_(sum|count)(?:\{[^}]*\})? ([0-9.e+-]+)$/gm)) {
    (m[1] === "sum" ? out.sum : out.count).set(LATENCY, Number(m[2]));
  }
  const inv = /^farm_ui_actions_total\{[^}]*\bop="invalid"[^}]*\} ([0-9.e+-]+)$/m.exec(text);
  out.uiInvalid = inv ? Number(inv[1]) : 0;
  return out;
}

/** Mean ms of the llm policy's HTTP exchanges per step (farm_policy_latency_seconds) over the run. */
function latencyMs(before: PhaseSums, after: PhaseSums): number {
  return meanMs(before, after, LATENCY);
}

/** Mean ms of a phase over the run (after − before). */
function meanMs(before: PhaseSums, after: PhaseSums, phase: string): number {
  const n = (after.count.get(phase) ?? 0) - (before.count.get(phase) ?? 0);
  const s = (after.sum.get(phase) ?? 0) - (before.sum.get(phase) ?? 0);
  return n > 0 ? (s / n) * 1000 : 0;
}

export const scenario: Scenario = {
  async run(opts: BenchOptions): Promise<void> {
    const devices = intOpt(opts, "devices", 16);
    const episodes = intOpt(opts, "episodes", devices * 8);
    const delayMs = intOpt(opts, "delay-ms", 50, 0);
    const a11yEvery = intOpt(opts, "a11y-every", 1);
    const maxSteps = intOpt(opts, "max-steps", 20);
    const screenshot = opts.screenshot === "on";
    if (opts.screenshot !== undefined && opts.screenshot !== "on" && opts.screenshot !== "off") throw new Error(`--screenshot must be on or off, got ${String(opts.screenshot)}`);
    const profile = profileOpt(opts);
    const out = (line: string) => process.stdout.write(`${line}\n`);
    const logger = createLogger({ service: "bench-agent", level: "warn" });
    const tmp = mkdtempSync(path.join(os.tmpdir(), "farm-bench-agent-"));
    const llm = await startLlmChild({ solver: NOTES_SOLVER, delayMs });
    try {
      let sims: SimChild | undefined;
      const farm = await startLocalFarm({
        devices: simChildDevices(devices, profile, [], (s) => (sims = s)),
        taskPaths: [path.join(REPO, "tasks/todo_create_note.textproto")],
        outDir: path.join(tmp, "out"),
        queuePrefix: "{agent}",
        logger,
        worker: { episode: { settleMs: 20 } },
        bindTimeoutMs: 180_000,
        scheduler: { http: true, tickMs: 100, windowSize: devices },
      });
      try {
        const metricsUrl = `${farm.worker.metricsUrl}/metrics`;
        const before = readPhases(await (await fetch(metricsUrl)).text());
        const llm0 = await llm.stats();
        const api = farm.schedulerService!.http.url;
        const t0 = performance.now();
        const cpu0 = process.cpuUsage();
        const simCpu0 = procCpuSec(sims?.child.pid);
        const spec = `llm:stand-in@${llm.endpoint}`;
        const body = { id: "bench-agent", taskId: "todo_create_note", episodes, policy: { spec, llm: { screenshot, concurrency: devices } }, options: { maxEpisodeSteps: maxSteps, a11yEvery } };
        const post = await fetch(`${api}/campaigns`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
        if (post.status !== 201) throw new Error(`submit: HTTP ${post.status} ${await post.text()}`);
        let st: { state: string; completed: number; summary?: { totalSteps: number; successes?: number } };
        for (;;) {
          await sleep(200);
          st = (await (await fetch(`${api}/campaigns/bench-agent`)).json()) as typeof st;
          if (st.state !== "running") break;
        }
        const wallSec = (performance.now() - t0) / 1000;
        const cpu = process.cpuUsage(cpu0);
        const simCpuSec = procCpuSec(sims?.child.pid) - simCpu0;
        const after = readPhases(await (await fetch(metricsUrl)).text());
        const steps = st.summary?.totalSteps ?? 0;
        const llm1 = await llm.stats();
        const requestsPerStep = steps > 0 ? (llm1.served - llm0.served) / steps : 0;
        const modelMs = steps > 0 ? (llm1.busyMs - llm0.busyMs) / steps : 0;
        const step = meanMs(before, after, "step");
        const action = meanMs(before, after, "action");
        const observation = meanMs(before, after, "observation");
        const derive = meanMs(before, after, "a11y_derive");
        const read = meanMs(before, after, "a11y_read");
        const policy = meanMs(before, after, "policy");
        const exchange = latencyMs(before, after);
        const overhead = step - modelMs - action - (observation - derive);
        const invalid = after.uiInvalid - before.uiInvalid;
        const f = (x: number, d = 3) => (Number.isFinite(x) ? x.toFixed(d) : "n/a");
        out(`farm bench agent: ${devices} simulated emulators (${profile}) on one worker host, ${episodes} episodes of todo_create_note, llm policy against the stand-in (${delayMs} ms per answer, screenshot ${screenshot ? "on" : "off"}), a11y every ${a11yEvery} step(s), max ${maxSteps} steps`);
        out("");
        out("| per step (mean) | ms |");
        out("|---|---|");
        for (const [k, v] of [["whole step", step], ["policy phase", policy], ["  the llm policy's answer (prompt, HTTP exchange, parsing)", exchange], ["    the model's own time (the stand-in's, per step)", modelMs], ["action (device)", action], ["observation (frame and tree, parallel)", observation], ["  tree read (device)", read], ["  the farm's work on the tree", derive]] as const) out(`| ${k} | ${f(v)} |`);
        out("");
        const cpuMsPerStep = steps > 0 ? (cpu.user + cpu.system) / 1000 / steps : 0;
        out(`the farm's process (worker host and scheduler; devices and the model run in child processes): ${f(cpuMsPerStep)} ms CPU per step`);
        // The simulated devices share the machine's cores with the farm: their CPU is what a real emulator would spend.
        out(`the devices' process (the simulated emulators): ${f(steps > 0 ? (simCpuSec * 1000) / steps : NaN)} ms CPU per step`);
        out(`episodes ${st.completed} in ${f(wallSec, 1)} s, ${steps} steps, ${f(requestsPerStep, 2)} model requests per step, ${invalid} invalid answers`);
        out(`devices=${devices} episodes_s=${f(st.completed / wallSec, 2)} steps_s=${f(steps / wallSec, 1)} farm_overhead_ms_per_step=${f(overhead)} a11y_ms_per_step=${f(read + derive)} invalid_actions=${invalid}`);
      } finally {
        await farm.close();
      }
    } finally {
      await llm.close();
      rmSync(tmp, { recursive: true, force: true });
    }
  },
};
