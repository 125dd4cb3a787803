import { test } from "node:test";
import assert from "node:assert/strict";
import { newDevice, sh, sleep, LOGCAT_EPOCH_LINE } from "./android-helpers.ts";
import type { SimAndroid } from "../src/android/index.ts";

function logTo(d: SimAndroid, tag: string, priority: "V" | "D" | "I" | "W" | "E", message: string): void {
  d.system.log.append({ pid: 1234, tid: 1240, priority, tag, message });
}

test("-v epoch lines match the runtime's regex; filter specs select tags and priorities", async () => {
  let now = 1_700_000_000_123;
  const d = newDevice(1, { now: () => now });
  logTo(d, "AndroidRLTask", "I", "score: 4");
  now += 5;
  logTo(d, "Other", "I", "noise");
  logTo(d, "AndroidRLTask", "V", "reward: 0.5");
  logTo(d, "Tag", "D", "extra: my_extra [1.0]");
  const r = await sh(d, "logcat -d -v epoch AndroidRLTask:V Tag:D *:S");
  const lines = r.out.split("\n").filter(Boolean);
  assert.equal(lines[0], "  1700000000.123  1234  1240 I AndroidRLTask: score: 4");
  const parsed = lines.map((l) => LOGCAT_EPOCH_LINE.exec(l)?.groups);
  assert.deepEqual(
    parsed.map((g) => [g?.tag?.trim(), g?.priority, g?.message]),
    [
      ["AndroidRLTask", "I", "score: 4"],
      ["AndroidRLTask", "V", "reward: 0.5"],
      ["Tag", "D", "extra: my_extra [1.0]"],
    ],
  );
  // Priority thresholds: AndroidRLTask:I drops the verbose line.
  const info = (await sh(d, "logcat -d -v epoch AndroidRLTask:I *:S")).out.split("\n").filter(Boolean);
  assert.equal(info.length, 1);
  // Without `*:S` everything stays (the default is *:V).
  assert.ok((await sh(d, "logcat -d -v epoch AndroidRLTask:I")).out.includes("Other"));
  // -s silences the rest like *:S.
  assert.ok(!(await sh(d, "logcat -d -s AndroidRLTask:I")).out.includes("Other"));
  d.close();
});

test("-c and -b all -c clear; -b selects buffers; bad options fail", async () => {
  const d = newDevice();
  logTo(d, "A", "I", "one");
  d.system.log.append({ pid: 1, tid: 1, priority: "E", tag: "AndroidRuntime", message: "crash line", buffer: "crash" });
  assert.ok((await sh(d, "logcat -d")).out.includes("crash line"));
  assert.ok(!(await sh(d, "logcat -d -b main")).out.includes("crash line"));
  assert.equal((await sh(d, "logcat -c")).code, 0);
  assert.ok(!(await sh(d, "logcat -d -b main")).out.includes("one"));
  assert.equal((await sh(d, "logcat -b all -c")).code, 0);
  assert.equal((await sh(d, "logcat -d -b all")).out, "");
  const bad = await sh(d, "logcat -d Tag:Q");
  assert.notEqual(bad.code, 0);
  assert.match(bad.err, /Invalid filter/);
  d.close();
});

test("streaming: backlog, then new lines, until the host closes the stream", async () => {
  const d = newDevice();
  logTo(d, "AndroidRLTask", "I", "before");
  const ac = new AbortController();
  const running = sh(d, "logcat -v epoch AndroidRLTask:V *:S", { signal: ac.signal });
  await sleep(20);
  logTo(d, "AndroidRLTask", "I", "after");
  logTo(d, "Other", "I", "filtered");
  await sleep(20);
  assert.equal(d.system.log.followerCount, 1);
  ac.abort();
  const r = await running;
  assert.equal(r.code, 0);
  assert.deepEqual(r.out.split("\n").filter(Boolean).map((l) => LOGCAT_EPOCH_LINE.exec(l)!.groups!.message), ["before", "after"]);
  assert.equal(d.system.log.followerCount, 0);
  d.close();
});

test("CLI `adb logcat` wrapper and device close end the stream", async () => {
  const d = newDevice();
  logTo(d, "SimTag", "I", "hello");
  const running = sh(d, `export ANDROID_LOG_TAGS="''"; exec logcat`);
  await sleep(10);
  d.close();
  const r = await running;
  assert.match(r.out, / I SimTag  : hello$/m);
});

test("-B binary logger_entry v1 records behind adbkit's `echo &&`", async () => {
  let now = 1_700_000_000_250;
  const d = newDevice(1, { now: () => now });
  logTo(d, "SimTag", "I", "message 1");
  logTo(d, "SimTag", "D", "debug dropped by *:I");
  now += 1000;
  logTo(d, "SimTag", "W", "message 2");
  const r = await sh(d, "echo && logcat -B *:I 2>/dev/null", { abortAfterMs: 30 });
  assert.equal(r.bytes[0], 0x0a);
  const buf = Buffer.from(r.bytes.subarray(1));
  const entries: { pid: number; tid: number; sec: number; nsec: number; prio: number; tag: string; msg: string }[] = [];
  let off = 0;
  while (off < buf.length) {
    const len = buf.readUInt16LE(off);
    const hdr = buf.readUInt16LE(off + 2);
    assert.equal(hdr, 0);
    const payload = buf.subarray(off + 20, off + 20 + len);
    const tagEnd = payload.indexOf(0, 1);
    entries.push({
      pid: buf.readInt32LE(off + 4),
      tid: buf.readInt32LE(off + 8),
      sec: buf.readInt32LE(off + 12),
      nsec: buf.readInt32LE(off + 16),
      prio: payload[0]!,
      tag: payload.subarray(1, tagEnd).toString(),
      msg: payload.subarray(tagEnd + 1, payload.length - 1).toString(),
    });
    off += 20 + len;
  }
  const sim = entries.filter((e) => e.tag === "SimTag");
  assert.deepEqual(sim.map((e) => [e.prio, e.msg]), [[4, "message 1"], [5, "message 2"]]);
  assert.deepEqual([sim[0]!.pid, sim[0]!.tid, sim[0]!.sec, sim[0]!.nsec], [1234, 1240, 1_700_000_000, 250_000_000]);
  d.close();
});

test("-e, -m and --pid narrow the output; -m ends a following logcat", async () => {
  const d = newDevice();
  logTo(d, "A", "I", "reward: 1");
  logTo(d, "A", "I", "score: 3");
  d.system.log.append({ pid: 99, tid: 99, priority: "I", tag: "A", message: "reward: 2" });
  const msgs = async (line: string): Promise<string[]> => (await sh(d, line)).out.split("\n").filter(Boolean).map((l) => LOGCAT_EPOCH_LINE.exec(l)!.groups!.message!);
  assert.deepEqual(await msgs("logcat -d -v epoch -e '^reward' A:V *:S"), ["reward: 1", "reward: 2"]);
  assert.deepEqual(await msgs("logcat -d -v epoch --pid=99 A:V *:S"), ["reward: 2"]);
  assert.deepEqual(await msgs("logcat -v epoch -m 2 A:V *:S"), ["reward: 1", "score: 3"]);
  d.close();
});

test("logcat | head -n 1 ends once head has its line (like SIGPIPE)", async () => {
  const d = newDevice();
  logTo(d, "A", "I", "first");
  logTo(d, "A", "I", "second");
  const r = await sh(d, "logcat -v epoch A:V *:S | head -n 1");
  assert.equal(LOGCAT_EPOCH_LINE.exec(r.out.replace(/\n$/, ""))?.groups?.message, "first");
  assert.equal(d.system.log.followerCount, 0);
  d.close();
});
