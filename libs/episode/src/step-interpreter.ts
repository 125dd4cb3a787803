/**
 * Runs setup and reset steps (task-format.md §7.2–§7.5). Each step gets attempts = max(num_retries, 3);
 * one attempt = execute the step, wait `settleMs` (upstream 0.5 s), run the check if any; a failure
 * re-executes the step from scratch. Results are data: the first step that fails its last attempt ends the
 * sequence with its status and message.
 */
import type { Device, StepStatus } from "@farm/adb";
import { findApk, type AdbRequest, type PyRegex, type SetupStep, type StepAction, type SuccessCheck, type Task } from "@farm/task";
import { TaskNotRunnableError } from "./errors.ts";
import { sleep } from "@farm/time";

export const POLL_MS = 100;

/** Listens for a logcat message from the moment it is created (farm rule for wait_for_message, §7.5). */
export interface MessageWaiter {
  wait(timeoutMs: number, signal?: AbortSignal): Promise<boolean>;
  dispose(): void;
}

export interface StepRunContext {
  device: Device;
  settleMs: number;
  apkDirs: string[];
  /** The episode's seeded RNG (start_random_activity). */
  rng: () => number;
  listenForMessage(message: PyRegex): MessageWaiter;
  /** Cause-named counters, incremented in place. */
  counters: Record<string, number>;
  /** The package of the last random activity (kept across steps of one device session). */
  randomActivity: { packageName?: string };
  signal?: AbortSignal;
}

export type StepsOutcome =
  | { ok: true }
  | {
      ok: false;
      /** Index in the step list and line in the task file. */
      stepIndex: number;
      line: number;
      /** Status of the last failed device call, or `check_failed` when the check itself timed out. */
      status: StepStatus | "check_failed" | "cancelled";
      message: string;
    };

type AttemptResult = { ok: true } | { ok: false; status: StepStatus | "check_failed" | "cancelled"; message: string };


const bump = (c: Record<string, number>, k: string, by = 1) => {
  c[k] = (c[k] ?? 0) + by;
};

function packageOf(activity: string): string {
  const i = activity.indexOf("/");
  return i < 0 ? activity : activity.slice(0, i);
}

async function adb(ctx: StepRunContext, request: AdbRequest): Promise<AttemptResult> {
  const r = await ctx.device.execute(request, { apkDirs: ctx.apkDirs });
  if (r.status === "ok") return { ok: true };
  bump(ctx.counters, "error_count_adb_request");
  return { ok: false, status: r.status, message: `${request.cmd.command}: ${r.status}: ${r.message}` };
}

async function executeAction(action: StepAction, ctx: StepRunContext): Promise<AttemptResult> {
  switch (action.kind) {
    case "sleep":
      await sleep(action.timeSec * 1000, ctx.signal);
      return { ok: true };
    case "adb":
      return adb(ctx, action.request);
    case "start_random_activity": {
      if (action.activities.length === 0) return { ok: false, status: "failed_precondition", message: "start_random_activity: empty activity list" };
      const activity = action.activities[Math.floor(ctx.rng() * action.activities.length)]!;
      const started = await adb(ctx, { timeoutSec: 0, cmd: { command: "start_activity", fullActivity: activity, extraArgs: action.extraArgs, forceStop: true } });
      if (!started.ok) return started;
      ctx.randomActivity.packageName = packageOf(activity);
      return waitForAppScreen(ctx, { kind: "wait_for_app_screen", appScreen: { activity, viewHierarchyPath: [] }, timeoutSec: action.timeoutSec });
    }
    case "force_stop_random_activity": {
      const p = ctx.randomActivity.packageName;
      return p ? adb(ctx, { timeoutSec: 0, cmd: { command: "force_stop", packageName: p } }) : { ok: true };
    }
    case "clear_cache_random_activity": {
      const p = ctx.randomActivity.packageName;
      return p ? adb(ctx, { timeoutSec: 0, cmd: { command: "package_manager_clear", packageName: p, userId: "" } }) : { ok: true };
    }
  }
}

/** Probes every POLL_MS until one says done, the budget is spent or the step is cancelled; a probe gets the time left. */
async function pollUntil(ctx: StepRunContext, budgetMs: number, probe: (timeoutMs: number) => Promise<boolean>): Promise<boolean> {
  const start = Date.now();
  while (Date.now() - start < budgetMs && !ctx.signal?.aborted) {
    if (await probe(Math.max(1, budgetMs - (Date.now() - start)))) return true;
    await sleep(POLL_MS, ctx.signal);
  }
  return false;
}

async function waitForAppScreen(ctx: StepRunContext, check: Extract<SuccessCheck, { kind: "wait_for_app_screen" }>): Promise<AttemptResult> {
  const start = Date.now();
  let last = "";
  try {
    const reached = await pollUntil(ctx, check.timeoutSec * 1000, async (timeoutMs) => {
      const m = await ctx.device.matchAppScreen(check.appScreen, { timeoutMs });
      if (m === "SUCCESS") return true;
      last = m;
      return false;
    });
    if (reached) return { ok: true };
  } finally {
    bump(ctx.counters, "total_time_waiting_for_app_screen_ms", Date.now() - start);
  }
  bump(ctx.counters, "error_count_wait_for_app_screen");
  return { ok: false, status: "check_failed", message: `wait_for_app_screen ${check.appScreen.activity}: not reached in ${check.timeoutSec} s (last: ${last || "no answer"})` };
}

async function runCheck(check: SuccessCheck, ctx: StepRunContext, waiter: MessageWaiter | undefined): Promise<AttemptResult> {
  switch (check.kind) {
    case "wait_for_app_screen":
      return waitForAppScreen(ctx, check);
    case "check_install": {
      let lastErr = "";
      const installed = await pollUntil(ctx, check.timeoutSec * 1000, async (timeoutMs) => {
        const r = await ctx.device.installedPackages({ timeoutMs });
        if (Array.isArray(r)) return r.includes(check.packageName);
        lastErr = `${r.status}: ${r.message}`;
        return false;
      });
      if (installed) return { ok: true };
      bump(ctx.counters, "error_count_check_install");
      return { ok: false, status: "check_failed", message: `check_install ${check.packageName}: not installed after ${check.timeoutSec} s${lastErr ? ` (${lastErr})` : ""}` };
    }
    case "wait_for_message": {
      const ok = waiter ? await waiter.wait(check.timeoutSec * 1000, ctx.signal) : false;
      if (ok) return { ok: true };
      bump(ctx.counters, "error_count_wait_for_message");
      return { ok: false, status: "check_failed", message: `wait_for_message /${check.message.source}/: no such line in ${check.timeoutSec} s` };
    }
  }
}

/** Runs one step with its attempts. */
export async function runStep(step: SetupStep, ctx: StepRunContext): Promise<AttemptResult> {
  const attempts = Math.max(step.successCondition?.numRetries ?? 0, 3);
  let last: AttemptResult = { ok: false, status: "internal_error", message: "not run" };
  for (let a = 0; a < attempts; a++) {
    if (ctx.signal?.aborted) return { ok: false, status: "cancelled", message: "cancelled" };
    const check = step.successCondition?.check;
    const waiter = check?.kind === "wait_for_message" ? ctx.listenForMessage(check.message) : undefined;
    try {
      last = step.action ? await executeAction(step.action, ctx) : { ok: true };
      if (!last.ok) continue;
      await sleep(ctx.settleMs, ctx.signal);
      if (check) last = await runCheck(check, ctx, waiter);
      if (last.ok) return last;
    } finally {
      waiter?.dispose();
    }
  }
  return last;
}

/** Runs a step list in order; the first step that fails all its attempts aborts the sequence. */
export async function runSteps(steps: readonly SetupStep[], ctx: StepRunContext): Promise<StepsOutcome> {
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i]!;
    const r = await runStep(step, ctx);
    if (!r.ok) return { ok: false, stepIndex: i, line: step.line, status: r.status, message: r.message };
  }
  return { ok: true };
}

/**
 * Fails fast on things that are not device trouble: an install step whose APK exists nowhere (e.g. an mpm
 * location from the internal archive without a copy in the APK folders).
 */
export function assertRunnable(task: Task, apkDirs: readonly string[]): void {
  for (const [list, which] of [[task.setupSteps, "setup"], [task.resetSteps, "reset"]] as const) {
    for (const s of list) {
      if (s.action?.kind !== "adb" || s.action.request.cmd.command !== "install_apk") continue;
      const loc = s.action.request.cmd.location;
      if (loc.kind === "blob") continue;
      const name = loc.path;
      // The same rule the driver's install uses, so a task that passes here can be installed.
      if (findApk(loc, apkDirs) === undefined) {
        const where = loc.kind === "mpm" ? `mpm package ${loc.packageName} (${loc.label})` : "filesystem";
        throw new TaskNotRunnableError(
          `task ${task.id}: ${which} step at line ${s.line} installs ${name} (${where}), which is not in ${apkDirs.length ? apkDirs.join(", ") : "any APK folder (none configured)"}`,
        );
      }
    }
  }
}
