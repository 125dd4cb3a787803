/**
 * A server that accepts connections and never answers (a hung adb server): every call ends as `timeout` at its
 * deadline, and the driver closes each connection it opened for it (nothing waits on, or holds, a dead socket).
 */
import assert from "node:assert/strict";
import net from "node:net";
import test from "node:test";
import { freePort } from "@farm/local-services";
import { pollUntil } from "@farm/time";
import { AdbDriver } from "../src/index.ts";

test("a silent adb server: timeouts at the deadline, and every connection the driver opened is closed", async () => {
  const open = new Set<net.Socket>();
  let accepted = 0;
  const srv = net.createServer((s) => {
    accepted++;
    open.add(s);
    s.on("error", () => undefined);
    s.on("close", () => open.delete(s));
    // Read and drop what arrives, so the client's close is seen.
    s.resume();
  });
  const port = await freePort();
  await new Promise<void>((r) => srv.listen(port, "127.0.0.1", r));
  const driver = new AdbDriver({ port, queryTimeoutMs: 300, actionTimeoutMs: 300, frameThreads: 1 });
  try {
    const dev = driver.device("emulator-5554");
    const list = await driver.listDevices(300);
    assert.ok(!Array.isArray(list) && list.status === "timeout", JSON.stringify(list));
    const state = await dev.state();
    assert.ok(typeof state === "object" && state.status === "timeout", JSON.stringify(state));
    assert.equal((await dev.shell("echo hi", { timeoutMs: 300 })).status, "timeout");
    const shot = await dev.screenshot();
    assert.ok("status" in shot && shot.status === "timeout", JSON.stringify(shot));
    const png = await dev.screenshotPng();
    assert.ok("status" in png && png.status === "timeout", JSON.stringify(png));
    assert.equal((await dev.waitBootComplete(300)).status, "timeout");
    const ch = await dev.openActionChannel();
    assert.equal((await ch.tap(1, 1)).status, "timeout");
    await ch.close();
    assert.ok(accepted >= 7, `the calls reached the server (${accepted} connections)`);
    const closed = await pollUntil(() => open.size === 0, { timeoutMs: 10_000, intervalMs: 20 });
    assert.ok(closed, `${open.size} of ${accepted} connections still open`);
  } finally {
    await driver.close();
    for (const s of open) s.destroy();
    await new Promise((r) => srv.close(r));
  }
});
