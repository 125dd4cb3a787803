import { test } from "node:test";
import assert from "node:assert/strict";
import { newDevice, sh } from "./android-helpers.ts";

test("echo and getprop", async () => {
  const d = newDevice();
  assert.deepEqual(await sh(d, "echo hi"), { code: 0, out: "hi\n", err: "", bytes: new TextEncoder().encode("hi\n") });
  assert.equal((await sh(d, "getprop sys.boot_completed")).out, "1\n");
  assert.match((await sh(d, "getprop")).out, /^\[ro\.build\.version\.sdk\]: \[29\]$/m);
  d.close();
});

test("quoting: single, double with escapes, adjacent concatenation", async () => {
  const d = newDevice();
  assert.equal((await sh(d, `echo '"{"''"\\"a\\":1"'`)).out, `"{""\\"a\\":1"\n`);
  assert.equal((await sh(d, `echo "{""\\"seed\\":3}"`)).out, `{"seed":3}\n`);
  assert.equal((await sh(d, `echo a\\ b  'c  d'"e"`)).out, `a b c  de\n`);
  d.close();
});

test("no expansion: $(...) and backticks stay literal", async () => {
  const d = newDevice();
  const r = await sh(d, "echo $(rm -rf /) `reboot` ${HOME}");
  assert.equal(r.out, "$(rm -rf /) `reboot` ${HOME}\n");
  assert.ok(d.fs.stat("/data/local/tmp"), "file system untouched");
  d.close();
});

test("unknown command: 127 and a message on stderr", async () => {
  const d = newDevice();
  const r = await sh(d, "frobnicate --now");
  assert.equal(r.code, 127);
  assert.equal(r.out, "");
  assert.equal(r.err, "/system/bin/sh: frobnicate: inaccessible or not found\n");
  d.close();
});

test("lists, and-or, exit, redirections", async () => {
  const d = newDevice();
  assert.equal((await sh(d, "false && echo no || echo yes; echo end")).out, "yes\nend\n");
  assert.equal((await sh(d, "echo a; exit 3; echo b")).code, 3);
  assert.equal((await sh(d, "nope 2>/dev/null")).err, "");
  const merged = await sh(d, "nope 2>&1");
  assert.equal(merged.out, "/system/bin/sh: nope: inaccessible or not found\n");
  assert.equal((await sh(d, "echo x >/dev/null")).out, "");
  await sh(d, "echo saved > /data/local/tmp/f.txt");
  assert.equal(new TextDecoder().decode(d.fs.read("/data/local/tmp/f.txt")), "saved\n");
  d.close();
});

test("adbkit idioms: echo && …, boot wait loop, service check, logcat wrapper export", async () => {
  const d = newDevice();
  const first = await sh(d, "echo && getprop ro.product.model 2>/dev/null");
  assert.equal(first.bytes[0], 0x0a);
  assert.equal(first.out, "\nsimmodel\n");
  assert.equal((await sh(d, "while getprop sys.boot_completed 2>/dev/null; do sleep 1; done")).out, "1\n");
  assert.equal((await sh(d, "service check window")).out, "Service window: found\n");
  assert.equal((await sh(d, `export ANDROID_LOG_TAGS="''"; exec echo ok`)).out, "ok\n");
  d.close();
});
