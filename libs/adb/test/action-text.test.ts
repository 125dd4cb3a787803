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

test("input_text with %s, quotes and 2,000 characters types the same text over gRPC and over the shell stream; clearing is one command", async () => {
  const base = `50%sdone 'single' "double" 100%% %%s $HOME \\ `;
  const long = (base + "abcdefghij".repeat(200)).slice(0, 2000);
  assert.equal(long.length, 2000);
  // As Android's `input text` types it: each %s a space (after a %, the next %s too).
  const want = long.replace(/%s/g, " ");
  assert.ok(want.startsWith(`50 done 'single' "double" 100%% %  $HOME \\ `), want.slice(0, 60));
  const got: string[] = [];
  for (const i of [0, 1]) {
    const dev = driver.device(fleet.emulators[i]!.serial);
    await todo(dev);
    // What the device's input dispatcher is given to type (its fields keep 200 characters, so the field alone cannot tell).
    const input = fleet.devices[i]!.android.system.input;
    const typed: string[] = [];
    const text = input.text.bind(input);
    input.text = (t: string) => (typed.push(t), text(t));
    const ch = await dev.openActionChannel();
    try {
      assert.equal((await ch.tap(150, 84)).status, "ok", "focus the search field");
      const r = await ch.text(long);
      assert.equal(r.status, "ok", r.message);
      await pollUntil(() => typed.join("").length >= want.length, { timeoutMs: 5000, intervalMs: 20 });
      assert.ok(typed.length >= 2, `long text goes in pieces: ${typed.map((p) => p.length).join(",")}`);
      assert.ok(typed.every((p) => Buffer.byteLength(p) <= 1024), "each piece at most 1 KB");
      got.push(typed.join(""));
      assert.equal(await searchText(dev, want.slice(0, 200)), want.slice(0, 200));
      // Clear: END and 2,000 DELs would be 2,001 keys; one command carries at most 512, refused whole.
      assert.equal((await ch.keyEvents(["KEYCODE_MOVE_END", ...Array<string>(2000).fill("KEYCODE_DEL")])).status, "failed_precondition");
      const cleared = await ch.keyEvents(["KEYCODE_MOVE_END", ...Array<string>(150).fill("KEYCODE_DEL")]);
      assert.equal(cleared.status, "ok", cleared.message);
      assert.equal(await searchText(dev, want.slice(0, 50)), want.slice(0, 50));
    } finally {
      input.text = text;
      await ch.close();
    }
  }
  assert.equal(got[0], want, "over gRPC");
  assert.equal(got[1], want, "over the shell stream");
});
