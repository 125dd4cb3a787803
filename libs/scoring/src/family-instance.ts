/**
 * A family's task instance for one episode (FAMILIES.md): `initialize` draws the parameters (or takes the
 * campaign's), runs the family's set-up steps on the device (bounded, timed; the first failure rejects naming the
 * step's line and why) and gives the goal; `score` runs the checks. The episode runner sees only `TaskInstance`.
 */
import { coerceError } from "@farm/errors";
import { shQuote } from "@farm/shell-words";
import type { FamilySetupStep, TaskFamily, TaskParams } from "@farm/task";
import { sleep, withDeadline } from "@farm/time";
import { scoreChecks } from "./checks.ts";
import { ScoringError } from "./errors.ts";
import type { ScoreLimits } from "./limits.ts";
import { cut } from "./limits.ts";
import { drawParams } from "./params.ts";
import { renderShell, renderText } from "./render.ts";
import type { DeviceCalls, InstanceKey, TaskInstance, TaskScore } from "./types.ts";

export interface FamilyInstanceOptions {
  /** The goal when neither the campaign nor the family gives one (the AndroidEnv task's `description`). */
  description?: string;
  limits?: Partial<ScoreLimits>;
  /** A set-up step's deadline when it gives none (`timeout_sec`). @default 30000 */
  defaultStepTimeoutMs?: number;
}

const OK_MARK = "__farm_setup_ok__";
const FAIL_MARK = "__farm_setup_failed__";

/** The device's answer to a set-up step, or why it failed. */
async function runSetupStep(step: FamilySetupStep, device: DeviceCalls, params: TaskParams, timeoutMs: number, signal: AbortSignal): Promise<string | undefined> {
  switch (step.kind) {
    case "sleep":
      await sleep(step.seconds * 1000, signal);
      return undefined;
    case "shell": {
      // The device's shell gives no exit status over `shell:`; the command runs in `sh -c` and says how it ended.
      const line = renderShell(step.command, params);
      const r = await device.shell(`sh -c ${shQuote(line)} && echo ${OK_MARK} || echo ${FAIL_MARK}`, { timeoutMs });
      if (r.status !== "ok") return `shell: ${r.status}: ${r.message}`;
      const out = r.stdout.trimEnd();
      if (out.endsWith(OK_MARK)) return undefined;
      const printed = out.endsWith(FAIL_MARK) ? out.slice(0, -FAIL_MARK.length).trim() : out.trim();
      return `shell ${JSON.stringify(cut(line, 200))} failed${printed ? `: ${cut(printed, 500)}` : " (non-zero exit)"}`;
    }
    case "setting": {
      const key = renderText(step.key, params);
      const value = renderText(step.value, params);
      const r = await device.execute({ timeoutSec: 0, cmd: { command: "settings", namespace: step.namespace, action: { verb: "put", key, value } } }, { timeoutMs });
      return r.status === "ok" ? undefined : `settings put ${step.namespace} ${key}: ${r.status}: ${r.message}`;
    }
    case "file": {
      const path = renderText(step.path, params);
      const content = new TextEncoder().encode(renderText(step.content, params));
      const r = await device.execute({ timeoutSec: 0, cmd: { command: "push", content, path } }, { timeoutMs });
      return r.status === "ok" ? undefined : `push ${path}: ${r.status}: ${r.message}`;
    }
  }
}

class FamilyInstance implements TaskInstance {
  readonly everySteps: number;
  private params: TaskParams | undefined;

  constructor(
    private readonly family: TaskFamily,
    private readonly key: InstanceKey,
    private readonly opts: FamilyInstanceOptions,
  ) {
    this.everySteps = family.checks?.everySteps ?? 0;
  }

  async initialize(device: DeviceCalls, signal: AbortSignal): Promise<{ goal: string; params: TaskParams }> {
    const f = this.family;
    const params = drawParams(f.params, { seed: this.key.seed, ...(this.key.fixedParams ? { fixed: this.key.fixedParams } : {}) });
    this.params = params;
    for (const [i, step] of f.setup.entries()) {
      if (signal.aborted) throw new ScoringError("setup_failed", `family ${f.id}: set-up cancelled before step ${i + 1}`);
      const timeoutMs = step.kind !== "sleep" && step.timeoutSec > 0 ? step.timeoutSec * 1000 : (this.opts.defaultStepTimeoutMs ?? 30_000);
      const budget = step.kind === "sleep" ? step.seconds * 1000 + 1000 : timeoutMs + 1000;
      let failed: string | undefined;
      try {
        failed = await withDeadline(runSetupStep(step, device, params, timeoutMs, signal), budget, () => new Error(`did not finish in ${budget} ms`));
      } catch (e) {
        failed = coerceError(e).message;
      }
      if (failed !== undefined) throw new ScoringError("setup_failed", `family ${f.id} (${f.sourcePath}:${step.line}): set-up step ${i + 1} (${step.kind}): ${failed}`);
    }
    const goal = this.key.goal ?? (f.goal ? renderText(f.goal, params) : undefined) ?? this.opts.description ?? "";
    return { goal, params };
  }

  async score(device: DeviceCalls, ctx: { answer?: string; final: boolean }, signal: AbortSignal): Promise<TaskScore> {
    const checks = this.family.checks;
    if (!checks) return { reward: 0, checks: [] };
    if (!this.params) return { reward: 0, checks: [], error: `family ${this.family.id}: scored before its set-up ran` };
    try {
      return await scoreChecks(checks, { device, params: this.params, signal, ...(ctx.answer !== undefined ? { answer: ctx.answer } : {}), ...(this.opts.limits ? { limits: this.opts.limits } : {}) });
    } catch (e) {
      return { reward: 0, checks: [], error: `family ${this.family.id}: ${coerceError(e).message}` };
    }
  }

  /** A family holds nothing between calls. */
  async close(): Promise<void> {}
}

/** The task instance of `family` for the episode `key` (its parameters are drawn when it is initialised). */
export function createFamilyInstance(family: TaskFamily, key: InstanceKey, opts: FamilyInstanceOptions = {}): TaskInstance {
  return new FamilyInstance(family, key, opts);
}
