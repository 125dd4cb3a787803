/**
 * The worker's forwarder set-up (a11y-trees.ts) device by device: a snapshot load that brings back a device
 * without the forwarder's flags drops its stream, the next read goes to uiautomator and the forwarder is enabled
 * again (no fallback said); a device without the package gets the APK installed (`forwarder`) or is left on
 * uiautomator (`auto`, or no APK), each fall said once however often trees are read.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { AdbDriver, isScreenTree, type AdbDevice, type Device, type ShellResult, type StepResult } from "@farm/adb";
import { startAdbServer, type LocalAdbServer } from "@farm/local-services";
import type { Logger } from "@farm/log";
import { capturedLogger } from "@farm/log/testing";
import { startSimulatedDevices, type SimFleet } from "@farm/simulator";
import { pollUntil, sleep } from "@farm/time";
import { createDeviceTrees, type DeviceTrees, type ForwarderFallback } from "../src/index.ts";

function capture(): { logger: Logger; events: () => string[] } {
  const { logger, lines } = capturedLogger("t");
  return { logger, events: () => lines.map((l) => String(l.event)) };
}

let adb: LocalAdbServer;
let sims: SimFleet;
let driver: AdbDriver;
let trees: DeviceTrees;
let dev: AdbDevice;
const log = capture();
const falls: ForwarderFallback[] = [];
const SNAP = `farm-test-a11y-${process.pid}`;

before(async () => {
  adb = await startAdbServer();
  sims = await startSimulatedDevices({ adbPort: adb.port, count: 1, emulator: { discovery: false } });
  const e = sims.emulators[0]!;
  trees = createDeviceTrees({ trees: "forwarder", forwarderApk: "/nonexistent.apk", forwarderConnectMs: 3000 }, { logger: log.logger, onFallback: (r) => falls.push(r) })!;
  driver = new AdbDriver({ port: adb.port, grpc: { mode: "config", endpoints: { [e.serial]: { address: `127.0.0.1:${e.grpc!.port}` } } }, a11y: { forwarder: trees } });
  dev = driver.device(e.serial);
  assert.equal((await dev.waitBootComplete(20_000)).status, "ok");
});

after(async () => {
  await sims?.emulators[0]?.device.snapshots.delete(SNAP).catch(() => undefined);
  await driver?.close();
  await trees?.close();
  await sims?.close();
  await adb?.close();
});

test("a snapshot load that drops the stream: one read on uiautomator, then the forwarder again, no fallback said", async () => {
  // Saved before the forwarder is on: loading it brings back a device whose forwarder has no endpoint.
  assert.equal((await dev.snapshot!("save", SNAP, { timeoutMs: 20_000 })).status, "ok");
  assert.equal(await trees.prepare(dev), "forwarder");
  const first = await dev.screenTree({ timeoutMs: 10_000 });
  assert.ok(isScreenTree(first) && first.source === "forwarder", JSON.stringify(first));
  assert.equal((await dev.snapshot!("load", SNAP, { timeoutMs: 20_000 })).status, "ok");
  assert.equal(await pollUntil(() => !trees.hub.serves(dev.serial), { timeoutMs: 5000, intervalMs: 20 }), true, "the stream ended with the load");
  const during = await dev.screenTree({ timeoutMs: 20_000 });
  assert.ok(isScreenTree(during) && during.source === "uiautomator", JSON.stringify(during));
  const back = await pollUntil(
    async () => {
      const t = await dev.screenTree({ timeoutMs: 20_000 });
      return isScreenTree(t) && t.source === "forwarder" ? t : undefined;
    },
    { timeoutMs: 8000, intervalMs: 50 },
  );
  assert.ok(back, "the forwarder serves the device again");
  assert.deepEqual(falls, []);
  assert.ok(!log.events().includes("a11y:forwarder-fallback"));
});

/** A device without the forwarder package: records what was run on it; no stream ever comes. */
function bareDevice(serial: string): Pick<Device, "serial" | "shell" | "installedPackages" | "execute"> & { calls: string[] } {
  const calls: string[] = [];
  const ok = { status: "ok", message: "", output: "", durationMs: 0 } as StepResult;
  return {
    serial,
    calls,
    installedPackages: async () => ["android", "com.android.settings"],
    shell: async (line: string) => {
      calls.push(`shell ${line.split(" ").slice(0, 3).join(" ")}`);
      return { status: "ok", message: "", stdout: "", stderr: "", exitCode: 0, durationMs: 0 } as unknown as ShellResult;
    },
    execute: async (req) => {
      calls.push(`execute ${req.cmd.command}`);
      return ok;
    },
  };
}

test("a device without the package: installed from the APK (forwarder), left alone (auto), or missing APK; each fall said once", async () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "farm-a11y-trees-"));
  const apk = path.join(tmp, "accessibility_forwarder.apk");
  fs.writeFileSync(apk, "SIMAPK 1\n{}\n");
  const cases: { trees: "forwarder" | "auto"; apk: string; calls: RegExp[]; reason: ForwarderFallback }[] = [
    { trees: "forwarder", apk, calls: [/^execute install_apk$/, /^shell settings put secure$/], reason: "no_stream" },
    { trees: "auto", apk, calls: [], reason: "not_installed" },
    { trees: "forwarder", apk: path.join(tmp, "none.apk"), calls: [], reason: "apk_missing" },
  ];
  try {
    for (const c of cases) {
      const l = capture();
      const seen: ForwarderFallback[] = [];
      const t = createDeviceTrees({ trees: c.trees, forwarderApk: c.apk, forwarderConnectMs: 200 }, { logger: l.logger, onFallback: (r) => seen.push(r), retryMs: 0 })!;
      try {
        const d = bareDevice("emulator-5554");
        assert.equal(await t.prepare(d), "uiautomator");
        for (const [i, re] of c.calls.entries()) assert.match(d.calls[i] ?? "", re, `${c.trees}: ${JSON.stringify(d.calls)}`);
        if (c.calls.length === 0) assert.deepEqual(d.calls, []);
        // Reads keep asking; retries (retryMs 0 here) stay quiet.
        for (let i = 0; i < 5; i++) {
          assert.equal(t.serves(d.serial), false);
          await sleep(60);
        }
        assert.deepEqual(seen, [c.reason], c.trees);
        assert.equal(l.events().filter((e) => e === "a11y:forwarder-fallback").length, 1, JSON.stringify(l.events()));
      } finally {
        await t.close();
      }
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});
