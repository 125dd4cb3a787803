/**
 * The simulated device as a `google_apis` userdebug emulator, through the real adb CLI and a private adb
 * server: `adb root` / `adb unroot` (adbd's root:/unroot: services and its restart), what needs root
 * (setting the time, apps' data), the time zone, svc, recents and intents as AndroidWorld sends them.
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

const serial = (): string => rig.fleet.devices[0]!.serial;
const adb = (args: string[]) => adbCli(rig.adb.port, serial(), args, { timeoutMs: 30_000 });
const shell = async (line: string): Promise<{ out: string; err: string; code: number }> => {
  const r = await adb(["shell", line]);
  return { out: r.stdout.toString(), err: r.stderr, code: r.code ?? -1 };
};

test("adb root / adb unroot: adbd's answers, the transport restarts, then id says who the shell is", async () => {
  assert.match((await shell("id")).out, /^uid=2000\(shell\) gid=2000\(shell\)/);
  assert.equal((await shell("whoami")).out, "shell\n");
  assert.equal((await shell("date 101512002023.00")).err, "date: cannot set date: Operation not permitted\n");
  assert.equal((await shell("mkdir -p /data/data/x.y/files")).code, 1, "apps' data needs root");
  assert.equal((await shell("setprop service.adb.root 1")).err, "Failed to set property 'service.adb.root' to '1'.\nSee dmesg for error reason.\n");
  assert.equal((await shell("setprop debug.sim.flag 1 && getprop debug.sim.flag")).out, "1\n");

  const root = await adb(["root"]);
  assert.equal(root.code, 0, root.stderr);
  assert.equal(root.stdout.toString(), "restarting adbd as root\n");
  const wait = await adb(["wait-for-device"]);
  assert.equal(wait.code, 0, wait.stderr);
  assert.match((await shell("id")).out, /^uid=0\(root\) gid=0\(root\)/);
  assert.equal((await shell("whoami")).out, "root\n");
  assert.equal((await adb(["root"])).stdout.toString(), "adbd is already running as root\n");

  const unroot = await adb(["unroot"]);
  assert.equal(unroot.stdout.toString(), "restarting adbd as non root\n");
  await adb(["wait-for-device"]);
  assert.equal((await shell("id -u")).out, "2000\n");
  assert.equal((await adb(["unroot"])).stdout.toString(), "adbd not running as root\n");
});

test("time: date MMDDhhmm[YY]YY.ss as root moves the clock that date and logcat read; the time zone by service call alarm 3", async () => {
  await adb(["root"]);
  await adb(["wait-for-device"]);
  assert.equal((await shell("settings put global auto_time 0")).code, 0);
  assert.equal((await shell("service call alarm 3 s16 UTC")).out, "Result: Parcel(00000000    '....')\n");
  const set = await shell("date 1016170423.00"); // AndroidWorld's '%m%d%H%M%y.%S'
  assert.equal(set.code, 0, set.err);
  assert.equal(set.out, "Mon Oct 16 17:04:00 UTC 2023\n");
  assert.equal((await shell("date 101517042023.30")).out, "Sun Oct 15 17:04:30 UTC 2023\n", "a four-digit year too");
  const epoch = Number((await shell("date +%s")).out);
  assert.ok(epoch >= Date.UTC(2023, 9, 15, 17, 4, 30) / 1000 && epoch < Date.UTC(2023, 9, 15, 17, 6) / 1000, String(epoch));
  await shell("log -t ClockTest moved");
  const line = (await shell("logcat -d -v epoch ClockTest:V *:S")).out;
  const stamp = Number(/^\s*(\d+)\.\d+/.exec(line)?.[1]);
  assert.ok(Math.abs(stamp - epoch) < 60, `logcat follows the clock: ${line}`);

  assert.equal((await shell("service call alarm 3 s16 America/New_York")).code, 0);
  assert.equal((await shell("getprop persist.sys.timezone")).out, "America/New_York\n");
  assert.match((await shell("date")).out, /^Sun Oct 15 13:0\d:\d\d EDT 2023\n$/);
  assert.equal((await shell("date +%Y-%m-%dT%H:%M%z")).out.slice(0, 11), "2023-10-15T");
  await shell("service call alarm 3 s16 UTC");
  assert.equal((await shell("date 023012002023")).err, "date: bad date '023012002023'\n");
  await adb(["unroot"]);
  await adb(["wait-for-device"]);
});

test("svc wifi|bluetooth|data write the settings provider; settings get reads them", async () => {
  for (const [svc, key] of [["wifi", "wifi_on"], ["bluetooth", "bluetooth_on"], ["data", "mobile_data"]] as const) {
    assert.equal((await shell(`svc ${svc} disable`)).code, 0);
    assert.equal((await shell(`settings get global ${key}`)).out, "0\n");
    assert.equal((await shell(`svc ${svc} enable`)).code, 0);
    assert.equal((await shell(`settings get global ${key}`)).out, "1\n");
  }
  await shell("settings put global airplane_mode_on 1");
  await shell("svc wifi enable");
  assert.equal((await shell("settings get global wifi_on")).out, "1\n", "unchanged: already on");
  await shell("svc wifi disable; svc wifi enable");
  assert.equal((await shell("settings get global wifi_on")).out, "2\n", "on despite airplane mode");
  await shell("settings put global airplane_mode_on 0; svc wifi enable");
});

test("intents by action resolve through the package manager; monkey, recents and am stack remove", async () => {
  const settings = await shell("am start -W -a android.settings.SETTINGS");
  assert.equal(settings.code, 0, settings.err);
  assert.match(settings.out, /^Starting: Intent \{ act=android\.settings\.SETTINGS \}\n/);
  assert.match(settings.out, /Activity: com\.android\.settings\/\.Settings\n/);
  assert.match((await shell("dumpsys window")).out, /mCurrentFocus=Window\{\S+ u0 com\.android\.settings\/com\.android\.settings\.Settings\}/);
  await shell("am start -a android.settings.WIFI_SETTINGS");
  assert.match((await shell("dumpsys window")).out, /com\.android\.settings\/com\.android\.settings\.Settings\$WifiSettingsActivity/);
  const none = await shell("am start -a android.settings.NO_SUCH_SCREEN");
  assert.match(none.err, /unable to resolve Intent \{ act=android\.settings\.NO_SUCH_SCREEN \}/);

  assert.equal((await adb(["install", fileURLToPath(new URL("../../../tasks/apks/classic_2048.apk", import.meta.url))])).code, 0);
  const monkey = await shell("monkey -p com.tpcstld.twozerogame 1");
  assert.equal(monkey.code, 0, monkey.err);
  assert.match(monkey.out, /^ {2}bash arg: -p\n {2}bash arg: com\.tpcstld\.twozerogame\n {2}bash arg: 1\n/);
  assert.match(monkey.out, /\nEvents injected: 1\n/);
  assert.match((await shell("dumpsys window")).out, /mCurrentFocus=Window\{\S+ u0 com\.tpcstld\.twozerogame\//);

  // AndroidWorld's close_recents: every `id=N` of the recents dump, then `am stack remove N`.
  const recents = (await shell("dumpsys activity recents")).out;
  const ids = [...recents.matchAll(/id=(\d+)/g)].map((m) => m[1]!);
  assert.ok(ids.length >= 2, recents);
  for (const id of ids) await shell(`am stack remove ${id}`);
  assert.doesNotMatch((await shell("dumpsys activity recents")).out, /Recent #/);
  assert.match((await shell("am stack list")).out, /taskId=1: com\.android\.launcher3\/\S+ .*visible=true/);
  assert.equal((await shell("am stack remove 0")).code, 255, "the home stack stays");
});
