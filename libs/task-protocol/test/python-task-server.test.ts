/**
 * Outside task code end to end: Debian's /usr/bin/python3 serves TaskEval-style classes (test/fixtures/wifi_tasks.py,
 * which reach the device only through env.controller.execute_adb_call with AndroidEnv's adb_pb2) with
 * `python3 -m farm_client.task_server`; createRemoteTaskInstance initializes and scores them against a simulated
 * device through the real adb server. The score is the one the class computed, the parameters are the same for
 * the same episode seed, and the device calls ran on the episode's device only (the other device is untouched).
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { AdbDriver, type AdbDevice } from "@farm/adb";
import { startAdbServer, startManagedChild, type LocalAdbServer, type ManagedChild } from "@farm/local-services";
import { freePort } from "@farm/net-ports";
import type { DeviceCalls } from "@farm/scoring";
import { startSimulatedDevices } from "@farm/simulator";
import { pollUntil } from "@farm/time";
import { createRemoteTaskInstance, TaskCodeError, DeviceCallRefusedError, type TaskProtocolEvent } from "../src/index.ts";

const PYTHON = "/usr/bin/python3";
const CLIENT_DIR = path.resolve(import.meta.dirname, "../../../clients/python");
const FIXTURES = path.resolve(import.meta.dirname, "fixtures");

let adb: LocalAdbServer;
let sim: Awaited<ReturnType<typeof startSimulatedDevices>>;
let driver: AdbDriver;
let server: ManagedChild;
let url: string;

before(async () => {
  adb = await startAdbServer();
  sim = await startSimulatedDevices({ adbPort: adb.port, count: 2 });
  driver = new AdbDriver({ host: "127.0.0.1", port: adb.port, actionTimeoutMs: 3000, queryTimeoutMs: 3000 });
  const port = await freePort();
  server = startManagedChild(PYTHON, ["-m", "farm_client.task_server", "--module", "wifi_tasks", "--path", FIXTURES, "--port", String(port)], { ...process.env, PYTHONPATH: CLIENT_DIR });
  const up = await pollUntil(() => /task server listening on/.test(server.output()), { timeoutMs: 20_000, intervalMs: 50 });
  assert.ok(up, `the task server did not start: ${server.output()}`);
  url = `http://127.0.0.1:${port}`;
});

after(async () => {
  await server?.close();
  await driver?.close();
  await sim?.close();
  await adb?.close();
});

/** The episode's device as task code may use it: each call recorded by the serial it went to. */
function deviceCalls(dev: AdbDevice, log: string[]): DeviceCalls {
  return {
    execute: (r, o) => {
      log.push(r.cmd.command);
      return dev.execute(r, o);
    },
    shell: (c, o) => dev.shell(c, o),
    screenTree: () => dev.screenTree!(),
  };
}

async function wifi(dev: AdbDevice): Promise<string> {
  const r = await dev.shell("settings get global wifi_on");
  assert.equal(r.status, "ok", r.message);
  return r.stdout.trim();
}

test("a TaskEval-style class initializes and scores an episode on its device only; the score is the class's", async () => {
  const [a, b] = [driver.device(sim.devices[0]!.serial), driver.device(sim.devices[1]!.serial)];
  await b.shell("settings put global wifi_on 1");
  const events: TaskProtocolEvent[] = [];
  const calls: string[] = [];
  const ref = { url, className: "WifiSet", timeoutSec: 30 };
  const inst = createRemoteTaskInstance(ref, { campaignId: "c1", index: 3, seed: 1234 }, { onEvent: (e) => events.push(e) });
  const signal = new AbortController().signal;
  const { goal, params } = await inst.initialize(deviceCalls(a, calls), signal);
  const state = params.on_or_off;
  assert.ok(state === "on" || state === "off", JSON.stringify(params));
  assert.equal(goal, `Turn Wi-Fi ${state}.`);
  assert.equal(typeof params.note, "string");
  // initialize put the opposite of the goal into wifi_on on device a; b kept its value.
  assert.equal(await wifi(a), state === "on" ? "0" : "1");
  assert.equal(await wifi(b), "1");
  assert.deepEqual(calls, ["generic", "settings"]);

  // Not done yet: the class computes 0.
  const s0 = await inst.score(deviceCalls(a, calls), { final: false }, signal);
  assert.equal(s0.error, undefined, s0.error);
  assert.equal(s0.success, 0);
  // The agent's doing: the class computes 1.
  await a.shell(`settings put global wifi_on ${state === "on" ? 1 : 0}`);
  const s1 = await inst.score(deviceCalls(a, calls), { final: true }, signal);
  assert.equal(s1.success, 1, JSON.stringify(s1));
  assert.equal(s1.reward, 1);
  assert.deepEqual(s1.checks.map((c) => [c.name, c.kind, c.passed]), [["WifiSet.is_successful", "remote", true]]);
  await inst.close();
  await inst.close();
  assert.equal(await wifi(b), "1", "the other device was never touched");

  const phases = events.filter((e) => e.kind === "phase").map((e) => [e.phase, e.outcome, e.calls]);
  assert.deepEqual(phases, [["initialize", "ok", 2], ["score", "ok", 1], ["score", "ok", 1]]);
  assert.ok(events.filter((e) => e.kind === "device_call").every((e) => e.kind === "device_call" && e.status === "ok"));

  // The same episode seed gives the same parameters (another host, a retry); a fixed parameter wins.
  const again = createRemoteTaskInstance(ref, { campaignId: "c1", index: 3, seed: 1234 });
  assert.deepEqual({ ...(await again.initialize(deviceCalls(a, []), signal)).params }, { ...params });
  await again.close();
  const fixed = createRemoteTaskInstance(ref, { index: 4, seed: 1234, fixedParams: { on_or_off: state === "on" ? "off" : "on" } });
  const f = await fixed.initialize(deviceCalls(a, []), signal);
  assert.equal(f.params.on_or_off, state === "on" ? "off" : "on");
  assert.equal(f.params.note, params.note, "the drawn parameters are the same, the fixed one replaced");
  await fixed.close();
});

test("the agent's answer reaches is_successful as env.interaction_cache", async () => {
  const a = driver.device(sim.devices[0]!.serial);
  const cur = await a.execute({ timeoutSec: 0, cmd: { command: "get_current_activity" } });
  const activity = cur.data?.kind === "current_activity" ? cur.data.fullActivity : "";
  assert.ok(activity, cur.message);
  const signal = new AbortController().signal;
  for (const [answer, want] of [[activity, 1], ["com.example/.Nope", 0]] as const) {
    const inst = createRemoteTaskInstance({ url, className: "AnswerMatch", timeoutSec: 30 }, { index: 0, seed: 1 });
    await inst.initialize(deviceCalls(a, []), signal);
    const s = await inst.score(deviceCalls(a, []), { answer, final: true }, signal);
    assert.equal(s.success, want, JSON.stringify(s));
    await inst.close();
  }
});

test("task code that raises, or asks for a call the farm refuses, fails the episode's initialize with a clear error", async () => {
  const a = driver.device(sim.devices[0]!.serial);
  const signal = new AbortController().signal;
  const broken = createRemoteTaskInstance({ url, className: "Broken", timeoutSec: 30 }, { index: 0, seed: 1 });
  await assert.rejects(broken.initialize(deviceCalls(a, []), signal), (e: unknown) => {
    assert.ok(e instanceof TaskCodeError);
    assert.match(e.message, /Broken: initialize: ValueError: the app snapshot is missing/);
    return true;
  });
  const s = await broken.score(deviceCalls(a, []), { final: true }, signal);
  assert.match(s.error ?? "", /session failed earlier/);
  await broken.close();

  const calls: string[] = [];
  const pushy = createRemoteTaskInstance({ url, className: "Pushy", timeoutSec: 30 }, { index: 0, seed: 1 });
  await assert.rejects(pushy.initialize(deviceCalls(a, calls), signal), (e: unknown) => {
    assert.ok(e instanceof DeviceCallRefusedError);
    assert.match(e.message, /generic adb command "pull" is not carried out for task code/);
    return true;
  });
  assert.deepEqual(calls, [], "nothing reached the device");
  await pushy.close();

  const unknown = createRemoteTaskInstance({ url, className: "NoSuchTask", timeoutSec: 30 }, { index: 0, seed: 1 });
  await assert.rejects(unknown.initialize(deviceCalls(a, []), signal), /HTTP 404: class 'NoSuchTask' is not served here \(served: AnswerMatch, Broken, Pushy, WifiSet\)/);
  await unknown.close();
});
