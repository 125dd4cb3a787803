/**
 * `ActionChannel.text` on both channels against simulated emulators: the emulator's gRPC (one KeyboardEvent with
 * `text`) and the adb shell stream (one quoted `input text`); what the focused field then holds is read back as
 * the screen's tree. Shell metacharacters arrive as typed; control characters are refused before anything is sent.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startAdbServer, type LocalAdbServer } from "@farm/local-services";
import { startSimulatedDevices } from "@farm/simulator";
import { pollUntil } from "@farm/time";
import { AdbDriver, GrpcActionChannel, isScreenTree, type AdbDevice } from "@farm/adb";
import { ShellActionChannel } from "@farm/adb/testing";

const APKS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../tasks/apks");
const TODO = "com.farm.simapps.todo";

let adb: LocalAdbServer;
let fleet: Awaited<ReturnType<typeof startSimulatedDevices>>;
let driver: AdbDriver;

before(async () => {
  adb = await startAdbServer();
  fleet = await startSimulatedDevices({ adbPort: adb.port, count: 2, emulator: { discovery: false } });
  const e = fleet.emulators[0]!;
  driver = new AdbDriver({ port: adb.port, grpc: { mode: "config", endpoints: { [e.serial]: { address: `127.0.0.1:${e.grpc!.port}` } } } });
});

after(async () => {
  await driver?.close();
  await fleet?.close();
  await adb?.close();
});

async function todo(dev: AdbDevice): Promise<void> {
  const r = await dev.execute({ timeoutSec: 0, cmd: { command: "install_apk", location: { kind: "filesystem", path: path.join(APKS, "todo.apk"), declaredPath: "todo.apk" } } });
  assert.equal(r.status, "ok", r.message);
  const s = await dev.execute({ timeoutSec: 0, cmd: { command: "start_activity", fullActivity: `${TODO}/${TODO}.MainActivity`, extraArgs: [], forceStop: true } });
  assert.equal(s.status, "ok", s.message);
}

/** The search field's text, once it equals `want` (input over gRPC lands asynchronously) or after a few reads. */
async function searchText(dev: AdbDevice, want: string): Promise<string> {
  let text = "";
  await pollUntil(
    async () => {
      const t = await dev.screenTree!({ timeoutMs: 10_000 });
      assert.ok(isScreenTree(t), "the screen reads as a tree");
      text = t.windows.flatMap((w) => w.tree.nodes).find((n) => n.viewIdResourceName.endsWith(":id/search"))?.text ?? "";
      return text === want;
    },
    { timeoutMs: 5000, intervalMs: 100 },
  );
  return text;
}

for (const [i, kind] of [[0, "gRPC"], [1, "shell"]] as const) {
  test(`text over the ${kind} channel types into the focused field exactly, shell metacharacters included; control characters are refused`, async () => {
    const dev = driver.device(fleet.emulators[i]!.serial);
    await todo(dev);
    const ch = await dev.openActionChannel();
    assert.ok(kind === "gRPC" ? ch instanceof GrpcActionChannel : ch instanceof ShellActionChannel);
    try {
      assert.equal((await ch.tap(150, 84)).status, "ok", "focus the search field");
      const typed = `milk & 'eggs' $(id) "x" ;|`;
      const r = await ch.text!(typed);
      assert.equal(r.status, "ok", r.message);
      assert.equal(await searchText(dev, typed), typed);
      const bad = await ch.text!("a\nb");
      assert.equal(bad.status, "failed_precondition");
      assert.match(bad.message, /control character U\+000A at position 1/);
      assert.equal((await ch.text!("")).status, "failed_precondition");
      assert.equal(await searchText(dev, typed), typed, "nothing of the refused text arrived");
    } finally {
      await ch.close();
    }
  });
}
