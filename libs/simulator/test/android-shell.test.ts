import { test } from "node:test";
import assert from "node:assert/strict";
import { newDevice, sh, installPrebuilt, rlMessages } from "./android-helpers.ts";

test("echo and getprop", async () => {
  const d = newDevice();
  const r = await sh(d, "echo hi");
  assert.equal(r.code, 0);
  assert.equal(r.out, "hi\n");
  assert.equal((await sh(d, "getprop sys.boot_completed")).out, "1\n");
  assert.equal((await sh(d, "getprop no.such.prop")).out, "\n");
  assert.match((await sh(d, "getprop")).out, /^\[ro\.build\.version\.sdk\]: \[29\]$/m);
  d.close();
});

test("quoting: single, double with escapes, adjacent concatenation", async () => {
  const d = newDevice();
  assert.equal((await sh(d, `echo '"{"''"\\"a\\":1"'`)).out, `"{""\\"a\\":1"\n`);
  assert.equal((await sh(d, `echo "{""\\"seed\\":3}"`)).out, `{"seed":3}\n`);
  assert.equal((await sh(d, `echo a\\ b  'c  d'"e"`)).out, `a b c  de\n`);
  // mdp_0000-style config built from adjacent textproto strings, as task-format.md §8.1 shows it.
  assert.equal((await sh(d, `echo "{""\\"initialSeed\\":-1,""\\"states\\":[0,1]""}"`)).out, `{"initialSeed":-1,"states":[0,1]}\n`);
  d.close();
});

test("intent extras reach the app after quote removal", async () => {
  const d = newDevice();
  await installPrebuilt(d, "classic_2048.apk");
  const r = await sh(d, `am start -n com.tpcstld.twozerogame/.MainActivity --ez "RL_TASK_ENABLED" "true" --es "RL_TASK_GAME_CONFIG" "{\\"seed\\":3}"`);
  assert.equal(r.code, 0, r.err);
  const proc = d.system.activities.foregroundProcess()!;
  assert.equal(proc.rlEnabled, true);
  assert.deepEqual(proc.config, { seed: 3 });
  // adbkit-style single-quoted words give the same result.
  await sh(d, `am start -S -n com.tpcstld.twozerogame/.MainActivity --ez 'RL_TASK_ENABLED' 'true' --es 'RL_TASK_GAME_CONFIG' '{"seed":4}'`);
  assert.deepEqual(d.system.activities.foregroundProcess()!.config, { seed: 4 });
  d.close();
});

test("invalid RL_TASK_GAME_CONFIG: an error line, defaults used", async () => {
  const d = newDevice();
  await installPrebuilt(d, "classic_2048.apk");
  await sh(d, `am start -n com.tpcstld.twozerogame/.MainActivity --ez RL_TASK_ENABLED true --es RL_TASK_GAME_CONFIG '{seed:'`);
  assert.deepEqual(d.system.activities.foregroundProcess()!.config, {});
  const log = (await sh(d, "logcat -d -v brief AndroidRLTask:E *:S")).out;
  assert.match(log, /^E\/AndroidRLTask\(\s*\d+\): invalid RL_TASK_GAME_CONFIG/m);
  assert.ok((await rlMessages(d)).some((m) => m.startsWith("extra: grid")), "app still started with defaults");
  d.close();
});

test("no command substitution: $(...) and backticks stay literal (parameters do expand)", async () => {
  const d = newDevice();
  d.fs.write("/data/local/tmp/keep", new Uint8Array([1]), 0o644, 0);
  const r = await sh(d, "echo $(rm -rf /data) `rm -rf /data` ${HOME} $HOME '$HOME'");
  assert.equal(r.out, "$(rm -rf /data) `rm -rf /data` / / $HOME\n");
  assert.ok(d.fs.stat("/data/local/tmp/keep"), "file system untouched");
  d.close();
});

test("unknown command: 127 and a message on stderr", async () => {
  const d = newDevice();
  const r = await sh(d, "frobnicate --now");
  assert.equal(r.code, 127);
  assert.equal(r.out, "");
  assert.equal(r.err, "/system/bin/sh: frobnicate: inaccessible or not found\n");
  const s = await sh(d, "echo 'unterminated");
  assert.notEqual(s.code, 0);
  assert.match(s.err, /syntax error/);
  d.close();
});

test("lists, and-or, exit, redirections, pipes", async () => {
  const d = newDevice();
  assert.equal((await sh(d, "false && echo no || echo yes; echo end")).out, "yes\nend\n");
  assert.equal((await sh(d, "echo a; exit 3; echo b")).code, 3);
  assert.equal((await sh(d, "nope 2>/dev/null")).err, "");
  assert.equal((await sh(d, "nope 2>&1")).out, "/system/bin/sh: nope: inaccessible or not found\n");
  assert.equal((await sh(d, "echo x >/dev/null")).out, "");
  assert.equal((await sh(d, "nope >/dev/null 2>&1")).err, "");
  await sh(d, "echo saved > /data/local/tmp/f.txt; echo more >> /data/local/tmp/f.txt");
  assert.equal((await sh(d, "cat /data/local/tmp/f.txt")).out, "saved\nmore\n");
  assert.equal((await sh(d, "cat /data/local/tmp/f.txt | grep -E mo+re")).out, "more\n");
  assert.equal((await sh(d, "cat /data/local/tmp/f.txt | grep -v saved | grep -c .")).out, "1\n");
  assert.equal((await sh(d, "echo abc | grep -q zzz")).code, 1);
  assert.equal((await sh(d, "ls /data/local/tmp")).out, "f.txt\n");
  assert.equal((await sh(d, "rm /data/local/tmp/f.txt && ls /data/local/tmp/f.txt")).code, 1);
  assert.equal((await sh(d, "sh -c 'echo nested; exit 4'")).code, 4);
  assert.equal((await sh(d, "sh -c 'exit 4'; echo after")).out, "after\n");
  assert.equal((await sh(d, "X=1 echo assigned")).out, "assigned\n");
  d.close();
});

test("adbkit idioms: echo && …, boot wait loop, service check, logcat wrapper export", async () => {
  const d = newDevice();
  const first = await sh(d, "echo && getprop ro.product.model 2>/dev/null");
  assert.equal(first.bytes[0], 0x0a);
  assert.equal(first.out, "\nsimmodel\n");
  assert.equal((await sh(d, "while getprop sys.boot_completed 2>/dev/null; do sleep 1; done")).out, "1\n");
  assert.equal((await sh(d, "service check window")).out, "Service window: found\n");
  assert.equal((await sh(d, "service check package")).out, "Service package: found\n");
  assert.equal((await sh(d, `export ANDROID_LOG_TAGS="''"; exec echo ok`)).out, "ok\n");
  assert.equal((await sh(d, "/system/bin/getprop ro.product.device")).out, "simdev\n");
  d.close();
});

test("interactive shell (empty command): one command per stdin line until exit", async () => {
  const d = newDevice();
  const r = await sh(d, "", { stdin: "echo one\ngetprop sys.boot_completed\nexit 5\necho never\n" });
  assert.equal(r.out, "one\n1\n");
  assert.equal(r.code, 5);
  d.close();
});

test("sh reading its commands from stdin: a line at a time, each without stdin of its own, until exit", async () => {
  const d = newDevice();
  const r = await sh(d, "sh", { stdin: "echo one\ncat\nsh -c 'echo two; exit 4'; echo after\nexit 6\necho never\n" });
  assert.equal(r.out, "one\ntwo\nafter\n", "cat got no stdin (it did not eat the next lines); a child shell's exit ends only itself");
  assert.equal(r.code, 6);
  d.close();
});

test("sleep stops when the stream closes", async () => {
  const d = newDevice();
  const t0 = Date.now();
  await sh(d, "sleep 30", { abortAfterMs: 50 });
  assert.ok(Date.now() - t0 < 2000);
  d.close();
});

test("a busy while loop still stops when the stream closes", async () => {
  const d = newDevice();
  const r = await sh(d, "while true; do echo y; done", { abortAfterMs: 30 });
  assert.ok(r.out.startsWith("y\ny\n"));
  assert.equal((await sh(d, "while false; do echo never; done; echo after")).out, "after\n");
  d.close();
});

test("pipeline tools: head, tail, wc; test and [", async () => {
  const d = newDevice();
  assert.equal((await sh(d, "getprop | head -n 2 | wc -l")).out, "2\n");
  assert.match((await sh(d, "getprop | tail -1")).out, /^\[[^\]]+\]: \[.*\]\n$/);
  assert.equal((await sh(d, "[ -d /data/local/tmp ] && echo dir")).out, "dir\n");
  assert.equal((await sh(d, "test -f /data/local/tmp/none || echo missing")).out, "missing\n");
  assert.equal((await sh(d, "[ 3 -gt 2 ] && [ a != b ] && echo ok")).out, "ok\n");
  d.close();
});
