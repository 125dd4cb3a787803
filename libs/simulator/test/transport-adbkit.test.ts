/** @devicefarmer/adbkit against simulated emulators through a private adb server. */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import type { EventEmitter } from "node:events";
import { PassThrough, type Duplex } from "node:stream";
import adbkit from "@devicefarmer/adbkit";
import { PNG } from "pngjs";
import { startRig, type Rig } from "./transport-helpers.ts";

const { Adb } = adbkit;
type Client = ReturnType<typeof Adb.createClient>;

let rig: Rig;
let client: Client;
before(async () => {
  rig = await startRig(2);
  client = Adb.createClient({ port: rig.adb.port });
});
after(async () => {
  await rig?.close();
});

const readAll = async (s: NodeJS.ReadableStream | Promise<NodeJS.ReadableStream>) => (await Adb.util.readAll((await s) as Duplex)) as Buffer;

test("listDevices returns every simulated emulator as type device", async () => {
  const listed = await client.listDevices();
  for (const d of rig.fleet.devices) assert.deepEqual(listed.find((x) => x.id === d.serial), { id: d.serial, type: "device" });
});

test("shell (legacy shell:): output, quoted array arguments, interactive persistent shell", async () => {
  const device = client.getDevice(rig.fleet.devices[0]!.serial);
  assert.equal((await readAll(device.shell("echo hi"))).toString(), "hi\n");
  assert.equal((await readAll(device.shell(["echo", "a b", "c"]))).toString(), "a b c\n");
  // Legacy shell merges stderr into stdout.
  assert.match((await readAll(device.shell("no-such-command"))).toString(), /not found/);
  assert.equal((await device.getProperties())["sys.boot_completed"], "1");

  const shell = await device.shell("");
  let got = "";
  shell.on("data", (b: Buffer) => (got += b.toString()));
  for (let i = 0; i < 3; i++) {
    shell.write(`echo marker-${i}\n`);
    const deadline = Date.now() + 5000;
    while (!got.includes(`marker-${i}\n`) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  }
  shell.end();
  assert.equal(got, "marker-0\nmarker-1\nmarker-2\n", "no echo, no prompt, LF only");
});

test("push then pull, stat and readdir over sync:", async () => {
  const device = client.getDevice(rig.fleet.devices[1]!.serial);
  const data = randomBytes(150_000);
  // A byte stream (not Readable.from, which is object mode): adbkit then sends DATA chunks of at
  // most 64 KiB, the limit a real adbd enforces too.
  const transfer = await device.push(new PassThrough().end(data), "/sdcard/kit.bin");
  await new Promise<void>((resolve, reject) => {
    transfer.on("end", () => resolve());
    transfer.on("error", reject);
  });
  assert.deepEqual(await readAll(device.pull("/sdcard/kit.bin")), data);
  const stat = await device.stat("/sdcard/kit.bin");
  assert.equal(stat.size, data.length);
  assert.ok(stat.isFile());
  const names = (await device.readdir("/sdcard")).map((e) => e.name);
  assert.ok(names.includes("kit.bin"), names.join(","));
});

test("openLogcat (binary -B records) delivers entries at INFO and above", async () => {
  const sim = rig.fleet.devices[0]!;
  // adbkit's typings name the module, not the Reader it returns: an EventEmitter with end().
  const reader = (await client.getDevice(sim.serial).openLogcat()) as unknown as EventEmitter & { end(): void };
  try {
    const seen: { tag: string; message: string; priority: number }[] = [];
    reader.on("entry", (e: { tag: string; message: string; priority: number }) => seen.push(e));
    const deadline = Date.now() + 5000;
    let n = 0;
    while (!seen.some((e) => e.tag === "KitTag" && e.message === "info 2") && Date.now() < deadline) {
      sim.android.system.log.append({ pid: 7, tid: 7, priority: "D", tag: "KitTag", message: `debug ${n}` });
      sim.android.system.log.append({ pid: 7, tid: 7, priority: "I", tag: "KitTag", message: `info ${n++}` });
      await new Promise((r) => setTimeout(r, 30));
    }
    const mine = seen.filter((e) => e.tag === "KitTag");
    assert.ok(mine.some((e) => e.message === "info 2"));
    assert.ok(mine.every((e) => e.priority === 4), "adbkit asks for *:I, debug lines are filtered out");
  } finally {
    reader.end();
  }
});

test("framebuffer('raw') has an rgba header and width*height*4 bytes", async () => {
  const sim = rig.fleet.devices[1]!;
  const fb = await client.getDevice(sim.serial).framebuffer("raw");
  const bytes = await readAll(fb);
  const want = sim.android.framebuffer();
  assert.equal(fb.meta.format, "rgba");
  assert.equal(fb.meta.width, want.width);
  assert.equal(fb.meta.height, want.height);
  assert.equal(bytes.length, want.width * want.height * 4);
});

test("screencap returns a PNG that decodes", async () => {
  const sim = rig.fleet.devices[0]!;
  const png = PNG.sync.read(await readAll(client.getDevice(sim.serial).screencap()));
  assert.equal(png.width, sim.android.framebuffer().width);
});

test("waitBootComplete resolves (the device reports sys.boot_completed=1) within a generous deadline", async () => {
  const device = client.getDevice(rig.fleet.devices[1]!.serial);
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    device.waitBootComplete().then(() => "booted"),
    new Promise<string>((r) => (timer = setTimeout(() => r("no answer in 30 s"), 30_000))),
  ]);
  clearTimeout(timer);
  assert.equal(outcome, "booted");
  assert.equal((await readAll(device.shell("getprop sys.boot_completed"))).toString().trim(), "1");
});

test("trackDevices reports a device leaving and coming back", async () => {
  const sim = rig.fleet.devices[1]!;
  const tracker = await client.trackDevices();
  const events: string[] = [];
  tracker.on("remove", (d: { id: string }) => events.push(`remove ${d.id}`));
  tracker.on("add", (d: { id: string; type: string }) => events.push(`add ${d.id} ${d.type}`));
  tracker.on("change", (d: { id: string; type: string }) => events.push(`change ${d.id} ${d.type}`));
  const waitFor = async (pred: () => boolean) => {
    const deadline = Date.now() + 5000;
    while (!pred() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return pred();
  };
  try {
    await new Promise((r) => setTimeout(r, 100)); // let the tracker take its first snapshot
    sim.faults.dropConnection();
    assert.ok(await waitFor(() => events.includes(`remove ${sim.serial}`)), events.join("; "));
    sim.faults.reconnect();
    assert.ok(
      await waitFor(() => events.some((e) => e === `add ${sim.serial} device` || e === `change ${sim.serial} device`)),
      events.join("; "),
    );
  } finally {
    tracker.end();
  }
});
