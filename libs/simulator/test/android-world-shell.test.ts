/**
 * AndroidWorld's device set-up and checks against a simulated device, through the real adb CLI and a private
 * adb server, sent as its adb_utils / file_utils / app_snapshot / datetime_utils and task_evals/single/system.py
 * send them (each call is `adb -s SERIAL <args…>`, as AndroidEnv's generic AdbRequest runs it). Written here
 * from what those modules send, not copied. Also the shell's mksh control flow as `adb shell` carries it.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { adbCli, startRig, type Rig } from "./transport-helpers.ts";

let rig: Rig;
before(async () => {
  rig = await startRig(1);
});
after(async () => {
  await rig?.close();
});

interface Response {
  ok: boolean;
  output: string;
  err: string;
}

/** adb_utils.issue_generic_request: the argv after `adb -s SERIAL`; a string is split on single spaces. */
async function generic(args: string[] | string): Promise<Response> {
  const argv = typeof args === "string" ? args.split(" ") : args;
  const r = await adbCli(rig.adb.port, rig.fleet.devices[0]!.serial, argv, { timeoutMs: 30_000 });
  return { ok: r.code === 0, output: r.stdout.toString(), err: r.stderr };
}

// file_utils, as AndroidWorld writes the checks.
async function checkFileExists(path: string, test = "-f"): Promise<boolean> {
  const script = `\n  if [ ${test} "${path}" ]; then\n      echo "Exists"\n  else\n      echo "Does not exist"\n  fi\n  `;
  const out = (await generic(["shell", script])).output;
  if (out.includes("Exists")) return true;
  if (out.includes("Does not exist")) return false;
  throw new Error(`unexpected output from file check: ${JSON.stringify(out)}`);
}
const checkDirectoryExists = (path: string): Promise<boolean> => checkFileExists(path, "-d");

async function clearDirectory(path: string): Promise<void> {
  if (!(await checkDirectoryExists(path))) return;
  const contents = (await generic(["shell", "ls", "-1", path])).output.trim();
  if (contents) {
    const r = await generic(["shell", "rm", "-r", `${path}/*`]);
    if (!r.ok) throw new Error(`Failed to clear directory ${path}: ${r.err}`);
  }
}

async function mkdir(path: string): Promise<void> {
  const r = await generic(["shell", "mkdir", "-p", path]);
  if (!r.ok) throw new Error(`Failed to create directory ${path}: ${r.err}`);
}

async function copyDir(src: string, dst: string): Promise<void> {
  if (!(await checkDirectoryExists(src))) return;
  if (!(await checkDirectoryExists(dst))) await mkdir(dst);
  const r = await generic(["shell", "cp", "-a", `${src}/.`, `${dst}/`]);
  if (!r.ok) throw new Error(`Failure copying ${src} directory to ${dst}: ${r.err}`);
}

const SNAPSHOT_DATA = "/data/data/android_world/snapshots";

async function saveSnapshot(pkg: string): Promise<void> {
  await clearDirectory(`${SNAPSHOT_DATA}/${pkg}`);
  await copyDir(`/data/data/${pkg}`, `${SNAPSHOT_DATA}/${pkg}`);
}

async function restoreSnapshot(pkg: string): Promise<void> {
  await generic(["shell", "am", "force-stop", pkg]);
  const snapshot = `${SNAPSHOT_DATA}/${pkg}`;
  if (!(await checkDirectoryExists(snapshot))) throw new Error(`Snapshot not found in ${snapshot}.`);
  const data = `/data/data/${pkg}`;
  await clearDirectory(data);
  await copyDir(snapshot, data);
  for (const args of [["shell", "restorecon", "-RD", data], ["shell", "chmod", "777", "-R", data]]) {
    const r = await generic(args);
    if (!r.ok) throw new Error(`${args.join(" ")} failed: ${r.err}`);
  }
}

const settingsGet = async (ns: string, key: string): Promise<string> => (await generic(["shell", "settings", "get", ns, key])).output.trim();
const toggle = (svc: string, onOrOff: "on" | "off"): Promise<Response> => generic(["shell", "svc", svc, onOrOff === "on" ? "enable" : "disable"]);

test("the shell: if/elif/else, [ ] and test, && || ! ;, for and while loops, $?, variables, one line per branch", async () => {
  const sh = async (script: string): Promise<string> => (await generic(["shell", script])).output;
  assert.equal(await sh("if [ -d /data/data/no.such.app ]; then echo Exists; else echo Does not exist; fi"), "Does not exist\n");
  assert.equal(await sh("if [ -d /data/local/tmp ]; then echo Exists; else echo Does not exist; fi"), "Exists\n");
  assert.equal(await sh("if [ -f /nope ]; then echo a; elif test -e /sdcard; then echo b; else echo c; fi"), "b\n");
  assert.equal(await sh("if ! [ -z x ] && [ -n x ] && [ 3 -lt 4 ] && [ a = a ] && [ a != b ]; then echo yes; fi"), "yes\n");
  assert.equal(await sh("[ 2 -eq 3 ] || [ 5 -le 4 ] || echo fallthrough"), "fallthrough\n");
  assert.equal(await sh("[ -d /nope -o -d /sdcard ] && [ -e /sdcard -a ! -w /system ] && echo combined"), "combined\n");
  assert.equal(await sh("false; echo $?; true; echo $?; ! true; echo $?"), "1\n0\n1\n");
  assert.equal(await sh("for x in a b c; do echo item $x; done"), "item a\nitem b\nitem c\n");
  assert.equal(await sh("N=x; while [ $N != xxx ]; do N=${N}x; echo $N; done"), "xx\nxxx\n");
  assert.equal(await sh("i=0; until [ $i = 000 ]; do i=${i}0; done; echo done $i"), "done 000\n");
  assert.equal(await sh("mkdir -p /data/local/tmp/g && touch /data/local/tmp/g/a.txt /data/local/tmp/g/b.txt && for f in /data/local/tmp/g/*.txt; do echo $f; done"), "/data/local/tmp/g/a.txt\n/data/local/tmp/g/b.txt\n");
  assert.equal(await sh("echo '$HOME' \"$HOME\" ${HOME}"), "$HOME / /\n");
  assert.equal(await sh("{ echo one; echo two; } | grep -c o"), "2\n");
  const piped = await adbCli(rig.adb.port, rig.fleet.devices[0]!.serial, ["shell", "sh"], { input: "X=kept\necho $X\nfor i in 1 2; do echo $i; done\n" });
  assert.equal(piped.stdout.toString(), "kept\n1\n2\n", "sh reading stdin keeps its variables from line to line");
  const syntax = await generic(["shell", "if true; then echo x"]);
  assert.match(syntax.err, /syntax error/);
  assert.equal(syntax.output, "", "nothing of an unparsable script runs");
  const bounded = await generic(["shell", "while true; do :; done; echo after"]);
  assert.equal(bounded.ok, false);
  assert.match(bounded.err, /loop stopped: more than 10000 iterations/);
  assert.equal(bounded.output, "", "the line ends at the bound");
  const doubling = await generic(["shell", "X=ab; while true; do X=$X$X; done; echo after"]);
  assert.equal(doubling.ok, false);
  assert.match(doubling.err, /a word expanded to more than 1048576 characters/);
});

test("file commands as app_snapshot uses them: cp -a, rm -r, ls -1, mkdir -p, chmod, chown, touch, mv; toybox errors", async () => {
  assert.equal((await generic("root")).ok, true);
  await generic("wait-for-device");
  const sh = (line: string) => generic(["shell", line]);
  assert.equal((await sh("mkdir -p /data/local/tmp/src/sub && echo hi > /data/local/tmp/src/sub/f && chmod 640 /data/local/tmp/src/sub/f")).ok, true);
  assert.equal((await sh("cp -r /data/local/tmp/src /data/local/tmp/dst && cat /data/local/tmp/dst/sub/f")).output, "hi\n");
  assert.equal((await sh("ls -1 /data/local/tmp/dst")).output, "sub\n");
  assert.match((await sh("ls -l /data/local/tmp/dst/sub")).output, /^total \d+\n-rw-r----- 1 root root 3 \d{4}-\d\d-\d\d \d\d:\d\d f\n$/);
  assert.equal((await sh("cp /data/local/tmp/src /data/local/tmp/x")).err, "cp: Skipped dir '/data/local/tmp/src'\n");
  assert.equal((await sh("cp /nope /data/local/tmp/x")).err, "cp: bad '/nope': No such file or directory\n");
  assert.equal((await sh("mv /data/local/tmp/dst /data/local/tmp/moved && ls /data/local/tmp/moved/sub")).output, "f\n");
  assert.equal((await sh("mkdir /data/local/tmp/moved")).err, "mkdir: '/data/local/tmp/moved': File exists\n");
  assert.equal((await sh("chown u0_a100:u0_a100 /data/local/tmp/moved")).ok, true);
  assert.equal((await sh("chown nobody-here /data/local/tmp/moved")).err, "chown: bad user 'nobody-here'\n");
  assert.equal((await sh("rm /data/local/tmp/moved")).err, "rm: /data/local/tmp/moved: Is a directory\n");
  assert.equal((await sh("rm -rf /data/local/tmp/moved /data/local/tmp/src && ls /data/local/tmp/moved")).err, "ls: /data/local/tmp/moved: No such file or directory\n");
  // /sdcard and /storage/self/primary lead to the primary storage, as the device's links do.
  assert.equal((await sh("echo pic > /sdcard/DCIM/a.txt && cat /storage/emulated/0/DCIM/a.txt /storage/self/primary/DCIM/a.txt")).output, "pic\npic\n");
  assert.match((await sh("ls /")).output, /^sdcard$/m);
  assert.equal((await sh("rm -r /system/bin")).err, "rm: /system/bin: Read-only file system\n");
  await generic("unroot");
  await generic("wait-for-device");
});

test("AndroidWorld: root, date and time zone set-up, then the system.py tasks' set-up and checks", async () => {
  // datetime_utils.setup_datetime + set_datetime
  assert.equal((await generic(["root"])).ok, true);
  await generic(["wait-for-device"]);
  for (const [ns, key, value] of [["global", "auto_time", "0"], ["global", "auto_time_zone", "0"], ["system", "time_12_24", "24"]] as const) {
    assert.equal((await generic(["shell", "settings", "put", ns, key, value])).ok, true);
  }
  assert.equal((await generic(["shell", "service", "call", "alarm", "3", "s16", "UTC"])).ok, true);
  assert.equal((await generic(["shell", "date", "1015153423.00"])).ok, true); // device_constants.ANDROID_DT
  const shown = (await generic(["shell", "date"])).output;
  assert.match(shown, /^Sun Oct 15 15:34:0\d UTC 2023\n$/, "what advance_system_time parses with '%a %b %d %H:%M:%S %Z %Y'");

  // Wi-Fi and Bluetooth: initialize_task toggles through svc, is_successful reads the provider.
  await toggle("wifi", "off");
  assert.equal(await settingsGet("global", "wifi_on"), "0");
  await toggle("wifi", "on");
  assert.ok(["1", "2"].includes(await settingsGet("global", "wifi_on")));
  await toggle("bluetooth", "on");
  assert.equal(await settingsGet("global", "bluetooth_on"), "1");
  await toggle("bluetooth", "off");
  assert.equal(await settingsGet("global", "bluetooth_on"), "0");

  // Brightness: set_brightness('max' | 'min') and the check's int() of settings get.
  for (const [level, expected] of [["255", 255], ["1", 1]] as const) {
    assert.equal((await generic(["shell", "settings", "put", "system", "screen_brightness", level])).ok, true);
    assert.equal(Number.parseInt(await settingsGet("system", "screen_brightness"), 10), expected);
  }

  // OpenAppTaskEval for settings: launch_app('settings') starts com.android.settings/.Settings; the check reads the activity in front.
  assert.equal((await generic(["shell", "am", "start", "-n", "com.android.settings/.Settings"])).ok, true);
  const visible = (await generic(["shell", "am stack list | grep -E visible=true"])).output;
  assert.match(visible, /topActivity=ComponentInfo\{com\.android\.settings\/com\.android\.settings\.Settings\}/);

  // close_recents
  const recents = (await generic("shell dumpsys activity recents")).output;
  for (const m of recents.matchAll(/id=(\d+)/g)) await generic(["shell", "am", "stack", "remove", m[1]!]);
  assert.doesNotMatch((await generic(["shell", "am stack list"])).output, /com\.android\.settings/);
});

test("AndroidWorld: app_snapshot save and restore of an app's data (the if [ -d ] / ls -1 / rm -r / cp -a flow)", async () => {
  assert.equal((await generic(["install", fileURLToPath(new URL("../../../tasks/apks/todo.apk", import.meta.url))])).ok, true);
  await generic(["root"]);
  await generic(["wait-for-device"]);
  const pkg = "com.farm.simapps.todo";
  assert.equal(await checkDirectoryExists(`/data/data/${pkg}`), true, "installd made the app's data folder");
  await generic(["shell", "mkdir", "-p", `/data/data/${pkg}/databases`]);
  await generic(["shell", `echo first > /data/data/${pkg}/databases/notes.db`]);

  await saveSnapshot(pkg);
  assert.equal((await generic(["shell", "cat", `${SNAPSHOT_DATA}/${pkg}/databases/notes.db`])).output, "first\n");

  // The app changes its data; the restore brings the snapshot back, and nothing else.
  await generic(["shell", `echo second > /data/data/${pkg}/databases/notes.db; touch /data/data/${pkg}/databases/extra`]);
  await restoreSnapshot(pkg);
  assert.equal((await generic(["shell", "cat", `/data/data/${pkg}/databases/notes.db`])).output, "first\n");
  assert.equal((await generic(["shell", "ls", "-1", `/data/data/${pkg}/databases`])).output, "notes.db\n");
  assert.match((await generic(["shell", "ls", "-l", `/data/data/${pkg}/databases`])).output, /-rwxrwxrwx .* notes\.db/, "chmod 777 -R");

  // file_utils.get_file_list_with_metadata: `ls DIR -ll -au`, regular files' size at [-5] and ctime at [-4:-2].
  const listing = (await generic(`shell ls /data/data/${pkg}/databases -ll -au`)).output.split("\n").filter((l) => l.startsWith("-"));
  assert.equal(listing.length, 1, listing.join("\n"));
  const fields = listing[0]!.split(" ");
  assert.equal(fields[fields.length - 1], "notes.db");
  assert.equal(Number.parseInt(fields[fields.length - 5]!, 10), "first\n".length);
  assert.match(fields.slice(-4, -2).join(" ").slice(0, -3), /^2023-10-15 15:\d\d:\d\d\.\d{6}$/, "Python's fromisoformat reads it; the clock set earlier");

  // A snapshot that was never saved: the restore fails as AndroidWorld's does.
  await assert.rejects(restoreSnapshot("com.tpcstld.twozerogame"), /Snapshot not found/);
  // Without root, app data is out of reach.
  await generic(["unroot"]);
  await generic(["wait-for-device"]);
  const denied = await generic(["shell", "rm", "-r", `/data/data/${pkg}/databases`]);
  assert.equal(denied.ok, false);
  assert.match(denied.err, /Permission denied/);
});
