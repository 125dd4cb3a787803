/** `farm run` end to end (a CLI test, so it lives with the CLI, not in a lib): a private adb server + one simulated device (--sim), trajectories with --out. */
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { REPO, taskText, runFarm } from "./fixtures.ts";

const farm = (args: string[], timeoutMs = 60_000) => runFarm(args, { timeoutMs });

test("farm run --sim with a TypeScript policy module: a line per episode, trajectories in --out, a JSON summary as the last line", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "farm-run-"));
  try {
    const taskFile = path.join(dir, "run_2048.textproto");
    fs.writeFileSync(taskFile, taskText({ id: "run_2048", app: "twozero", maxEpisodeSteps: 5 }));
    // A policy module in TypeScript outside any package (so it loads as CommonJS): the farm command runs it as it is.
    const policyFile = path.join(dir, "corner.ts");
    fs.writeFileSync(policyFile, 'type Touch = { actionType: "TOUCH"; touchPosition: [number, number] };\nexport function createPolicy(): { name: string; act(): Touch } {\n  return { name: "corner", act: (): Touch => ({ actionType: "TOUCH", touchPosition: [0.1, 0.9] }) };\n}\n');
    const out = path.join(dir, "out");
    const r = await farm(["run", taskFile, "--episodes", "2", "--policy", `module:${policyFile}`, "--seed", "3", "--sim", "--settle-ms", "20", "--apk-dir", path.join(REPO, "tasks/apks"), "--out", out]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split("\n");
    assert.equal(lines.length, 3, r.stdout);
    assert.match(lines[0]!, /^episode=0 steps=6 reward=\d+(\.\d+)? outcome=truncated cause=step_limit/);
    assert.match(lines[1]!, /^episode=1 steps=6 /);
    const summary = JSON.parse(lines[2]!);
    assert.equal(summary.episodes, 2);
    assert.equal(summary.steps, 12);
    assert.equal(typeof summary.reward_mean, "number");
    assert.deepEqual(summary.outcomes, { truncated: 2 });
    const files: string[] = [];
    const walk = (d: string) => {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) e.isDirectory() ? walk(path.join(d, e.name)) : files.push(e.name);
    };
    walk(out);
    assert.ok(files.some((f) => f.endsWith(".avro")), `avro files in ${files.join(", ")}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("farm run --device <serial> --adb-port <port>: an existing device on a given adb server; bad task is an error", async () => {
  const { startAdbServer } = await import("@farm/local-services");
  const { startSimulatedDevices } = await import("@farm/simulator");
  const adb = await startAdbServer();
  const sim = await startSimulatedDevices({ adbPort: adb.port, count: 1 });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "farm-run-"));
  try {
    const taskFile = path.join(dir, "run_notes.textproto");
    fs.writeFileSync(taskFile, taskText({ id: "run_notes", app: "notes", maxEpisodeSteps: 3 }));
    // The bad task fails before it reaches the device: it runs beside the good one.
    const [r, bad] = await Promise.all([
      farm(["run", taskFile, "--episodes", "1", "--device", sim.devices[0]!.serial, "--adb-port", String(adb.port), "--settle-ms", "20", "--apk-dir", path.join(REPO, "tasks/apks")]),
      farm(["run", path.join(dir, "missing.textproto"), "--device", sim.devices[0]!.serial, "--adb-port", String(adb.port)]),
    ]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split("\n");
    assert.equal(lines.length, 2);
    assert.match(lines[0]!, /^episode=0 steps=\d+ reward=-?[\d.]+ outcome=(terminated|truncated) cause=\w+/);
    assert.equal(JSON.parse(lines[1]!).device, sim.devices[0]!.serial);
    assert.notEqual(bad.code, 0);
    assert.equal(bad.stdout, "");
    assert.match(bad.stderr, /missing\.textproto/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    await sim.close();
    await adb.close();
  }
});
