/**
 * The `Device` contract, as tests any implementation must pass: the driver over a simulated emulator and the
 * in-memory `FakeDevice` run the same suite (device-conformance.test.ts), so a unit test that uses the fake
 * relies only on behaviour the real driver has.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Device, LogcatRecord, StepResult } from "@farm/adb";

export const APK_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../tasks/apks");
const NOTES = "com.farm.simapps.notes";
const NOTES_MAIN = `${NOTES}/${NOTES}.MainActivity`;
const G2048 = "com.tpcstld.twozerogame";
const TAG = "FarmConformance";

/** A fresh device per suite; `faults` is what the implementation can simulate. */
export interface ConformanceTarget {
  device(): Device;
  /** The device stops answering until `hang(false)`. */
  hang(on: boolean): void;
}

const apk = (name: string) => ({ kind: "filesystem" as const, path: name, declaredPath: name });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(what: string, cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

function assertOk(r: StepResult, what: string): void {
  assert.equal(r.status, "ok", `${what}: ${r.status} ${r.message}`);
}

async function current(dev: Device): Promise<string | undefined> {
  const r = await dev.execute({ timeoutSec: 0, cmd: { command: "get_current_activity" } });
  return r.data?.kind === "current_activity" ? r.data.fullActivity : undefined;
}

async function packages(dev: Device): Promise<string[]> {
  const p = await dev.installedPackages({ timeoutMs: 10_000 });
  assert.ok(Array.isArray(p), `installedPackages failed: ${JSON.stringify(p)}`);
  return p;
}

export function deviceConformance(name: string, target: () => ConformanceTarget): void {
  describe(`Device conformance: ${name}`, () => {
    test("identity and liveness: a serial, state `device`, probe and boot wait succeed", async () => {
      const dev = target().device();
      assert.ok(dev.serial.length > 0);
      if (dev.state) assert.equal(await dev.state({ timeoutMs: 5000 }), "device");
      if (dev.probe) assertOk(await dev.probe({ timeoutMs: 5000 }), "probe");
      assertOk(await dev.waitBootComplete(10_000), "waitBootComplete");
    });

    test("screen: size, orientation and a screenshot of that size agree", async () => {
      const dev = target().device();
      const size = await dev.screenSize({ timeoutMs: 5000 });
      assert.ok("width" in size && size.width > 0 && size.height > 0, JSON.stringify(size));
      const o = await dev.orientation({ timeoutMs: 5000 });
      assert.ok(o === 0 || o === 1 || o === 2 || o === 3, JSON.stringify(o));
      const shot = await dev.screenshot({ timeoutMs: 10_000 });
      assert.ok("rgba" in shot, JSON.stringify(shot));
      assert.deepEqual([shot.width, shot.height], [size.width, size.height]);
      assert.equal(shot.rgba.length, shot.width * shot.height * 4);
      const r = await dev.execute({ timeoutSec: 0, cmd: { command: "get_orientation" } });
      assertOk(r, "get_orientation");
      assert.deepEqual(r.data, { kind: "orientation", orientation: o });
    });

    test("install_apk / uninstall_package change the installed packages; a missing APK is an error, not a throw", async () => {
      const dev = target().device();
      const install = await dev.execute({ timeoutSec: 30, cmd: { command: "install_apk", location: apk("classic_2048.apk") } }, { apkDirs: [APK_DIR] });
      assertOk(install, "install");
      assert.ok((await packages(dev)).includes(G2048));
      assertOk(await dev.execute({ timeoutSec: 0, cmd: { command: "uninstall_package", packageName: G2048 } }), "uninstall");
      assert.ok(!(await packages(dev)).includes(G2048));
      const missing = await dev.execute({ timeoutSec: 0, cmd: { command: "install_apk", location: apk("no-such.apk") } }, { apkDirs: [APK_DIR] });
      assert.notEqual(missing.status, "ok");
      assert.match(missing.message, /no-such\.apk/);
    });

    test("start_activity brings the activity to the front; force_stop takes it away; the app-screen check follows", async () => {
      const dev = target().device();
      assertOk(await dev.execute({ timeoutSec: 30, cmd: { command: "install_apk", location: apk("sim_notes.apk") } }, { apkDirs: [APK_DIR] }), "install");
      assertOk(await dev.execute({ timeoutSec: 0, cmd: { command: "start_activity", fullActivity: NOTES_MAIN, extraArgs: [], forceStop: true } }), "start");
      assert.equal(await current(dev), NOTES_MAIN);
      assert.equal(await dev.matchAppScreen({ activity: NOTES_MAIN, viewHierarchyPath: [] }), "SUCCESS");
      assert.equal(await dev.matchAppScreen({ activity: "", viewHierarchyPath: [] }), "EMPTY_EXPECTED_ACTIVITY");
      assertOk(await dev.execute({ timeoutSec: 0, cmd: { command: "force_stop", packageName: NOTES } }), "force_stop");
      assert.notEqual(await current(dev), NOTES_MAIN);
      assert.equal(await dev.matchAppScreen({ activity: NOTES_MAIN, viewHierarchyPath: [] }), "UNEXPECTED_ACTIVITY");
      const absent = await dev.execute({ timeoutSec: 0, cmd: { command: "start_activity", fullActivity: "com.example.absent/.Main", extraArgs: [], forceStop: false } });
      assert.notEqual(absent.status, "ok");
    });

    test("logcat: a cleared stream gets later lines of its tags, in order, and no others", async () => {
      const dev = target().device();
      await dev.shell(`log -t ${TAG} before-clear`, { timeoutMs: 5000 });
      const stream = await dev.openLogcat({ filters: [`${TAG}:V`], clear: true });
      const recs: LogcatRecord[] = [];
      stream.onRecord((r) => recs.push(r));
      try {
        for (const line of [`log -t ${TAG} line-1`, "log -t FarmOtherTag other", `log -t ${TAG} line-2`]) {
          const r = await dev.shell(line, { timeoutMs: 5000 });
          assert.equal(r.status, "ok", `${line}: ${r.message}`);
        }
        await waitFor("two lines", () => recs.length >= 2);
        await sleep(100);
        assert.deepEqual(recs.map((r) => [r.tag, r.message]), [[TAG, "line-1"], [TAG, "line-2"]]);
        assert.equal(stream.malformedLines, 0);
      } finally {
        await stream.close();
      }
      assert.equal(stream.state, "closed");
    });

    test("action channel: touch down / move / up, tap and HOME answer ok; HOME leaves the app", async () => {
      const dev = target().device();
      assertOk(await dev.execute({ timeoutSec: 30, cmd: { command: "install_apk", location: apk("sim_notes.apk") } }, { apkDirs: [APK_DIR] }), "install");
      assertOk(await dev.execute({ timeoutSec: 0, cmd: { command: "start_activity", fullActivity: NOTES_MAIN, extraArgs: [], forceStop: true } }), "start");
      const ch = await dev.openActionChannel();
      try {
        assertOk(await ch.touchDown(10, 10), "down");
        assertOk(await ch.touchMove(20, 20), "move");
        assertOk(await ch.touchUp(20, 20), "up");
        assertOk(await ch.tap(5, 5), "tap");
        assertOk(await ch.keyEvent("KEYCODE_HOME"), "home");
      } finally {
        await ch.close();
      }
      assert.notEqual(await current(dev), NOTES_MAIN);
    });

    test("a hung device answers `timeout` within the call's deadline, and answers again after", async () => {
      const t = target();
      const dev = t.device();
      t.hang(true);
      try {
        const t0 = performance.now();
        const r = await dev.execute({ timeoutSec: 0.5, cmd: { command: "get_current_activity" } });
        assert.equal(r.status, "timeout");
        assert.ok(performance.now() - t0 < 10_000);
      } finally {
        t.hang(false);
      }
      // The driver may need a retry to reconnect after a hang; within a generous deadline it answers again.
      let again: StepResult | undefined;
      for (const end = Date.now() + 20_000; Date.now() < end && again?.status !== "ok"; ) again = await dev.execute({ timeoutSec: 5, cmd: { command: "get_orientation" } });
      assertOk(again!, "after the hang");
    });
  });
}
