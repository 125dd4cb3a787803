/**
 * The driver's two sources agree: the simulated device's own accessibility forwarder (enabled by the hub as
 * AndroidEnv's wrapper does) and `uiautomator dump` give the same clickable nodes. Skipped, saying why, on a
 * simulator without the forwarder app (it comes with the forwarder's branch).
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startAdbServer, type LocalAdbServer } from "@farm/local-services";
import { startSimulatedDevices } from "@farm/simulator";
import { A11yForwarderHub, AdbDriver, FORWARDER_PACKAGE, isScreenTree, type AdbDevice, type ScreenTree } from "@farm/adb";
import { forgeForwarderStream } from "@farm/adb/testing";
import { sleep } from "@farm/time";

const APKS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../tasks/apks");

let adb: LocalAdbServer;
let sims: Awaited<ReturnType<typeof startSimulatedDevices>>;
let driver: AdbDriver;
let dev: AdbDevice;
const hub = new A11yForwarderHub();

before(async () => {
  adb = await startAdbServer();
  sims = await startSimulatedDevices({ adbPort: adb.port, count: 1, seed: 5 });
  driver = new AdbDriver({ port: adb.port, a11y: { forwarder: hub } });
  dev = driver.device(sims.devices[0]!.serial);
  assert.equal((await dev.waitBootComplete(20_000)).status, "ok");
  const r = await dev.execute({ timeoutSec: 30, cmd: { command: "install_apk", location: { kind: "filesystem", path: path.join(APKS, "sim_notes.apk"), declaredPath: "apks/sim_notes.apk" } } });
  assert.equal(r.status, "ok", r.message);
});

after(async () => {
  await driver?.close();
  await hub.close();
  await sims?.close();
  await adb?.close();
});

const clickable = (t: ScreenTree) =>
  t.windows.filter((w) => w.isActive).flatMap((w) => w.tree.nodes.filter((n) => n.isClickable && n.isVisibleToUser).map((n) => [n.text, n.viewIdResourceName, n.boundsInScreen]));

test("forwarder and uiautomator give the same clickable nodes of the launcher", async (t) => {
  const pkgs = await dev.installedPackages({ timeoutMs: 10_000 });
  assert.ok(Array.isArray(pkgs), JSON.stringify(pkgs));
  if (!pkgs.includes(FORWARDER_PACKAGE)) return t.skip(`the simulated device has no ${FORWARDER_PACKAGE} (it comes with the a11y-forwarder branch)`);
  assert.equal((await hub.enable(dev)).status, "ok");
  const end = Date.now() + 15_000;
  while (!hub.serves(dev.serial)) {
    assert.ok(Date.now() < end, "the device's forwarder never connected to the hub");
    await new Promise((r) => setTimeout(r, 50));
  }
  const forest = await dev.screenTree({ timeoutMs: 10_000 });
  assert.ok(isScreenTree(forest), JSON.stringify(forest));
  assert.equal(forest.source, "forwarder", "auto picks the forwarder once it serves the device");
  const dump = await dev.screenTree({ source: "uiautomator", timeoutMs: 20_000 });
  assert.ok(isScreenTree(dump), JSON.stringify(dump));
  assert.ok(clickable(forest).length > 0);
  assert.deepEqual(clickable(forest), clickable(dump));
});

test("a forged forwarder stream for the device's port is refused and the device keeps its own trees", async (t) => {
  const pkgs = await dev.installedPackages({ timeoutMs: 10_000 });
  if (!Array.isArray(pkgs) || !pkgs.includes(FORWARDER_PACKAGE)) return t.skip(`the simulated device has no ${FORWARDER_PACKAGE}`);
  assert.equal((await hub.enable(dev)).status, "ok");
  const end = Date.now() + 15_000;
  while (!hub.serves(dev.serial)) {
    assert.ok(Date.now() < end, "the device's forwarder never connected to the hub");
    await sleep(50);
  }
  const real = await dev.screenTree({ timeoutMs: 10_000 });
  assert.ok(isScreenTree(real) && real.source === "forwarder", JSON.stringify(real));
  const port = await hub.portFor(dev.serial);
  const refusedBefore = hub.refusals;
  const seen: string[] = [];
  hub.onRefused = (reason, serial) => seen.push(`${reason}:${serial}`);
  // Another device's port named in the authority (a second port on the same server: the client's word), and the
  // real port itself; without the token, and with a wrong one.
  const other = await hub.portFor("emulator-forged");
  const forge = (dialPort: number, token?: string): Promise<string> => forgeForwarderStream(dialPort, { authorityPort: port, ...(token === undefined ? {} : { token }) });
  assert.match(await forge(other), /^PERMISSION_DENIED: not this device's forwarder \(token_missing\)/);
  assert.match(await forge(port, "00".repeat(16)), /^PERMISSION_DENIED: not this device's forwarder \(bad_token\)/);
  assert.match(await forge(port, "not hex"), /bad_token/);
  assert.deepEqual(seen, [`token_missing:${dev.serial}`, `bad_token:${dev.serial}`, `bad_token:${dev.serial}`]);
  assert.equal(hub.refusals.token_missing - refusedBefore.token_missing, 1);
  assert.equal(hub.refusals.bad_token - refusedBefore.bad_token, 2);
  // The device's own stream is still the one read: its trees, not the forged empty forest.
  assert.ok(hub.serves(dev.serial));
  const after = await dev.screenTree({ timeoutMs: 10_000 });
  assert.ok(isScreenTree(after) && after.source === "forwarder", JSON.stringify(after));
  assert.deepEqual(clickable(after), clickable(real));
  assert.ok(clickable(after).length > 0);
});
