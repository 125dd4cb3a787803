/**
 * Shell commands through the device's long-lived shell session (shell-session.ts), against a simulated device
 * through a real (private) adb server: each command is on its own (directory, stdin, `exit`), commands with
 * output end promptly, a command past its deadline drops the session and the next one works, two commands at
 * once both answer, and output of many chunks arrives whole.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { startAdbServer, type LocalAdbServer } from "@farm/local-services";
import { startSimulatedDevices } from "@farm/simulator";
import { AdbDriver, type AdbDevice } from "@farm/adb";

let adb: LocalAdbServer;
let sims: Awaited<ReturnType<typeof startSimulatedDevices>>;
let driver: AdbDriver;
let dev: AdbDevice;

async function sh(line: string, timeoutMs = 5000): Promise<string> {
  const r = await dev.shell(line, { timeoutMs });
  assert.equal(r.status, "ok", `${line}: ${r.message}`);
  return r.stdout;
}

before(async () => {
  adb = await startAdbServer();
  sims = await startSimulatedDevices({ adbPort: adb.port, count: 1, seed: 8 });
  driver = new AdbDriver({ port: adb.port });
  dev = driver.device(sims.devices[0]!.serial);
  assert.equal((await dev.waitBootComplete(30_000)).status, "ok");
});

after(async () => {
  await driver?.close();
  await sims?.close();
  await adb?.close();
});

describe("shell session", () => {
  test("each command is on its own: a cd, a read of stdin or an exit does not reach the next one", async () => {
    const home = (await sh("pwd")).trim();
    await sh("cd /sdcard");
    assert.equal((await sh("pwd")).trim(), home, "the directory is the shell's own");
    assert.equal(await sh("cat"), "", "stdin is empty: cat ends at once instead of reading the next command");
    assert.equal(await sh("echo before; exit 3; echo after"), "before\n");
    assert.equal(await sh("echo still here"), "still here\n");
    assert.equal(await sh("echo 'it'\\''s quoted' \"and \\$this\""), "it's quoted and $this\n");
  });

  test("commands with output answer promptly, one after another", async () => {
    const took: number[] = [];
    for (let i = 0; i < 21; i++) {
      const t0 = performance.now();
      assert.match(await sh("am stack list"), /taskId=/);
      took.push(performance.now() - t0);
    }
    const median = took.sort((a, b) => a - b)[10]!;
    // Not a speed test: a stall of the end marker behind the output (Nagle against delayed ACKs) costs ~40 ms on
    // every call, so the median shows it; a busy machine slows some calls, not the median by that much.
    assert.ok(median < 30, `median ${median.toFixed(1)} ms per command with output`);
  });

  test("a command past its deadline is a timeout; the next command works", async () => {
    const r = await dev.shell("sleep 3", { timeoutMs: 300 });
    assert.equal(r.status, "timeout", r.message);
    assert.equal(await sh("echo next"), "next\n");
  });

  test("two commands at once on one device both answer, each with its own output", async () => {
    const [a, b] = await Promise.all([sh("sleep 0.3; echo slow"), sh("echo quick")]);
    assert.deepEqual([a, b], ["slow\n", "quick\n"]);
  });

  test("long output of many chunks arrives whole", async () => {
    const one = await sh("dumpsys");
    assert.ok(one.length > 2000, `dumpsys printed ${one.length} bytes`);
    const many = await sh(Array.from({ length: 40 }, () => "dumpsys").join("; "));
    assert.equal(many, one.repeat(40));
  });
});
