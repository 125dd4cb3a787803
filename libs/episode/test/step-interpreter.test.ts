import { test } from "node:test";
import assert from "node:assert/strict";
import type { AppScreenMatch, Device, StepResult } from "@farm/adb";
import type { AdbRequest, SetupStep } from "@farm/task";
import { runSteps, assertRunnable, type StepRunContext } from "../src/step-interpreter.ts";
import { LogAccumulator } from "../src/log-accumulator.ts";
import { TaskNotRunnableError } from "../src/errors.ts";
import { seededRandomXor } from "@farm/seeded-random";
import { canonicalLogParsing, py } from "./helpers.ts";

const ok = (output = ""): StepResult => ({ status: "ok", message: "", output, durationMs: 1 });
const fail = (status: StepResult["status"]): StepResult => ({ status, message: "boom", output: "", durationMs: 1 });

/** A scripted fake of the few Device methods the step interpreter uses. */
function fakeDevice(opts: { execute?: (r: AdbRequest, n: number) => StepResult; packages?: () => string[]; screen?: () => AppScreenMatch; onExecute?: () => void }) {
  const calls: string[] = [];
  let n = 0;
  const dev = {
    serial: "fake",
    async execute(r: AdbRequest) {
      calls.push(r.cmd.command);
      opts.onExecute?.();
      return opts.execute ? opts.execute(r, n++) : ok();
    },
    async installedPackages() {
      return opts.packages ? opts.packages() : [];
    },
    async matchAppScreen() {
      return opts.screen ? opts.screen() : "SUCCESS";
    },
  } as unknown as Device;
  return { dev, calls };
}

function ctx(dev: Device, acc?: LogAccumulator, settleMs = 0): StepRunContext {
  const a = acc ?? new LogAccumulator(canonicalLogParsing(), [], 100, { onMalformed() {}, onExtraDropped() {} });
  return { device: dev, settleMs, apkDirs: [], rng: seededRandomXor(1).next, listenForMessage: (m) => a.listenForMessage(m), counters: {}, randomActivity: {} };
}

const start: AdbRequest = { timeoutSec: 0, cmd: { command: "start_activity", fullActivity: "p/p.A", extraArgs: [], forceStop: true } };
const step = (s: Partial<SetupStep>): SetupStep => ({ line: 1, ...s });

test("attempts = max(num_retries, 3): a failing command is re-executed 3 times, or num_retries times", async () => {
  const a = fakeDevice({ execute: () => fail("internal_error") });
  const c = ctx(a.dev);
  const r = await runSteps([step({ action: { kind: "adb", request: start } })], c);
  assert.equal(r.ok, false);
  assert.equal(a.calls.length, 3);
  assert.equal(c.counters.error_count_adb_request, 3);
  assert.equal(!r.ok && r.status, "internal_error");
  const b = fakeDevice({ execute: () => fail("internal_error") });
  await runSteps([step({ action: { kind: "adb", request: start }, successCondition: { numRetries: 5, check: { kind: "check_install", packageName: "p", timeoutSec: 0.01 } } })], ctx(b.dev));
  assert.equal(b.calls.length, 5);
});

test("a failed check re-executes the step from scratch; success ends it", async () => {
  let installed = false;
  const d = fakeDevice({ execute: (_r, n) => ((installed = n >= 1), ok()), packages: () => (installed ? ["p"] : ["q"]) });
  const r = await runSteps([step({ action: { kind: "adb", request: start }, successCondition: { numRetries: 0, check: { kind: "check_install", packageName: "p", timeoutSec: 0.15 } } })], ctx(d.dev));
  assert.deepEqual(r, { ok: true });
  assert.equal(d.calls.length, 2);
});

test("settle: every step waits settleMs after executing, with or without a check", async () => {
  const d = fakeDevice({});
  const t0 = Date.now();
  await runSteps([step({ action: { kind: "adb", request: start } }), step({ action: { kind: "sleep", timeSec: 0.05 } })], ctx(d.dev, undefined, 60));
  const ms = Date.now() - t0;
  assert.ok(ms >= 165, `took ${ms} ms`);
});

test("wait_for_app_screen times out as a check failure with its counters; the sequence stops at the failing step", async () => {
  const d = fakeDevice({ screen: () => "UNEXPECTED_ACTIVITY" });
  const c = ctx(d.dev);
  const r = await runSteps(
    [
      step({ line: 7, action: { kind: "adb", request: start }, successCondition: { numRetries: 0, check: { kind: "wait_for_app_screen", appScreen: { activity: "p/p.A", viewHierarchyPath: [] }, timeoutSec: 0.05 } } }),
      step({ line: 9, action: { kind: "adb", request: start } }),
    ],
    c,
  );
  assert.equal(r.ok, false);
  assert.equal(!r.ok && r.line, 7);
  assert.equal(!r.ok && r.status, "check_failed");
  assert.equal(d.calls.length, 3, "second step never ran");
  assert.equal(c.counters.error_count_wait_for_app_screen, 3);
  assert.ok((c.counters.total_time_waiting_for_app_screen_ms ?? 0) >= 100);
});

test("wait_for_message listens from the start of the step, even while rewards are paused", async () => {
  const acc = new LogAccumulator(canonicalLogParsing(), [], 100, { onMalformed() {}, onExtraDropped() {} });
  acc.pause();
  // The app logs the line while the step command runs, before the settle and the check.
  const d = fakeDevice({ onExecute: () => acc.onRecord({ message: "app ready" }) });
  const r = await runSteps([step({ action: { kind: "adb", request: start }, successCondition: { numRetries: 0, check: { kind: "wait_for_message", message: py("^app ready$"), timeoutSec: 0.05 } } })], ctx(d.dev, acc, 20));
  assert.deepEqual(r, { ok: true });
  assert.equal(d.calls.length, 1);
});

test("start_random_activity uses the episode RNG, remembers the package; force_stop/clear_cache act on it", async () => {
  const seen: string[] = [];
  const d = fakeDevice({ execute: (r) => (r.cmd.command === "start_activity" ? seen.push(r.cmd.fullActivity) : r.cmd.command === "force_stop" ? seen.push(`stop ${r.cmd.packageName}`) : r.cmd.command === "package_manager_clear" ? seen.push(`clear ${r.cmd.packageName}`) : 0, ok()) });
  const steps: SetupStep[] = [
    step({ action: { kind: "force_stop_random_activity" } }),
    step({ action: { kind: "start_random_activity", activities: ["a/a.X", "b/b.Y", "c/c.Z"], extraArgs: [], timeoutSec: 0.1 } }),
    step({ action: { kind: "force_stop_random_activity" } }),
    step({ action: { kind: "clear_cache_random_activity" } }),
  ];
  const c1 = ctx(d.dev);
  await runSteps(steps, c1);
  const first = [...seen];
  assert.equal(first.length, 3, "no-op before any random activity");
  const pkg = first[0]!.split("/")[0];
  assert.deepEqual(first.slice(1), [`stop ${pkg}`, `clear ${pkg}`]);
  seen.length = 0;
  await runSteps(steps, ctx(d.dev));
  assert.deepEqual(seen, first, "same seed, same choice");
});

test("assertRunnable: an mpm APK missing from the APK folders is a task error, not device trouble", () => {
  const task = {
    id: "t",
    setupSteps: [step({ line: 3, action: { kind: "adb", request: { timeoutSec: 0, cmd: { command: "install_apk", location: { kind: "mpm", packageName: "x/y", label: "v1", path: "2020-2048-debug.apk" } } } } })],
    resetSteps: [],
  } as never;
  assert.throws(() => assertRunnable(task, ["/nonexistent"]), (e: unknown) => e instanceof TaskNotRunnableError && e.retryable === false && /line 3/.test(e.message));
});
