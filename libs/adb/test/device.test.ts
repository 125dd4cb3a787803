/**
 * The driver against simulated devices through a real (private) adb server: every step command kind,
 * checking the device's resulting state; injection attempts; hang, drop and reconnect; logcat;
 * app-screen; screenshots. Device A takes the commands, device B the faults.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { adbServerAnswers, freePort, startAdbServer, type LocalAdbServer } from "@farm/local-services";
import { startSimulatedDevices } from "@farm/simulator";
import type { AdbCommand } from "@farm/task";
import { AdbDriver, type AdbCallEvent, type AdbDevice, type DeviceChange, type LogcatRecord, type StepResult } from "@farm/adb";
import { pyRegex } from "@farm/task";

const APKS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../tasks/apks");
const NOTES = "com.farm.simapps.notes";
const NOTES_MAIN = `${NOTES}/${NOTES}.MainActivity`;
const G2048 = "com.tpcstld.twozerogame";
const G2048_MAIN = `${G2048}/${G2048}.MainActivity`;
const CATCH = "com.example.catchtheball";
const TMP = "/data/local/tmp";

let adb: LocalAdbServer;
let sims: Awaited<ReturnType<typeof startSimulatedDevices>>;
let driver: AdbDriver;
let A: AdbDevice;
let B: AdbDevice;
let serialB: string;
const events: AdbCallEvent[] = [];
const changes: DeviceChange[] = [];
let tracking: ReturnType<AdbDriver["trackDevices"]>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

function run(dev: AdbDevice, cmd: AdbCommand, timeoutSec = 0): Promise<StepResult> {
  return dev.execute({ timeoutSec, cmd });
}

async function sh(dev: AdbDevice, line: string): Promise<string> {
  const r = await dev.shell(line, { timeoutMs: 5000 });
  assert.equal(r.status, "ok", `${line}: ${r.message}`);
  return r.stdout;
}

function assertOk(r: StepResult, what: string): void {
  assert.equal(r.status, "ok", `${what}: ${r.status} ${r.message}\n${r.output}`);
}

async function packages(dev: AdbDevice): Promise<string[]> {
  const p = await dev.installedPackages({ timeoutMs: 5000 });
  assert.ok(Array.isArray(p), `pm list packages failed: ${JSON.stringify(p)}`);
  return p;
}

async function currentActivity(dev: AdbDevice): Promise<string | undefined> {
  const r = await run(dev, { command: "get_current_activity" });
  return r.data?.kind === "current_activity" ? r.data.fullActivity : undefined;
}

async function tmpFiles(dev: AdbDevice): Promise<string> {
  return sh(dev, `ls ${TMP}`);
}

before(async () => {
  adb = await startAdbServer();
  sims = await startSimulatedDevices({ adbPort: adb.port, count: 2, seed: 7 });
  driver = new AdbDriver({
    port: adb.port,
    defaultTimeoutMs: 10_000,
    queryTimeoutMs: 3000,
    actionTimeoutMs: 1000,
    logcatReopenAttempts: 6,
    logcatReopenBackoffMs: 100,
    events: { onCall: (e) => events.push(e) },
  });
  tracking = driver.trackDevices((c) => changes.push(c));
  const [a, b] = sims.devices;
  assert.ok(a && b);
  A = driver.device(a.serial);
  B = driver.device(b.serial);
  serialB = b.serial;
  for (const d of [A, B]) {
    assertOk(await d.waitBootComplete(10_000), `boot ${d.serial}`);
    // Sim Notes on both devices, so each test can also run alone (--test-name-pattern).
    const loc = { kind: "filesystem" as const, path: path.join(APKS, "sim_notes.apk"), declaredPath: "apks/sim_notes.apk" };
    assertOk(await run(d, { command: "install_apk", location: loc }), `install notes on ${d.serial}`);
  }
});

after(async () => {
  tracking?.close();
  await driver?.close();
  await sims?.close();
  await adb?.close();
});

describe("discovery and health", () => {
  test("devices are listed, tracked and report their state", async () => {
    const list = await driver.listDevices();
    assert.ok(Array.isArray(list));
    assert.deepEqual(list.map((d) => d.serial).sort(), [A.serial, B.serial].sort());
    assert.ok(list.every((d) => d.state === "device"));
    await waitFor("tracker adds", () => tracking.devices().filter((d) => d.state === "device").length === 2);
    assert.equal(await A.state(), "device");
    assert.equal(await driver.device("emulator-1").state(), "gone");
  });
});

describe("step commands (device A)", () => {
  test("install_apk (filesystem, blob), check listed; missing file and mpm are clear errors", async () => {
    assertOk(await run(A, { command: "uninstall_package", packageName: NOTES }), "uninstall before");
    assert.ok(!(await packages(A)).includes(NOTES));
    const p = path.join(APKS, "sim_notes.apk");
    assertOk(await run(A, { command: "install_apk", location: { kind: "filesystem", path: p, declaredPath: "apks/sim_notes.apk" } }), "install");
    assert.ok((await packages(A)).includes(NOTES));
    const blob = new Uint8Array(fs.readFileSync(path.join(APKS, "classic_2048.apk")));
    assertOk(await run(A, { command: "install_apk", location: { kind: "blob", contents: blob } }), "install blob");
    assertOk(await run(A, { command: "install_apk", location: { kind: "filesystem", path: path.join(APKS, "catch_the_ball.apk"), declaredPath: "x" } }), "install catch");
    const pk = await packages(A);
    assert.ok(pk.includes(G2048) && pk.includes(CATCH));
    // Temp APKs are removed from the device.
    assert.doesNotMatch(await tmpFiles(A), /farm-.*\.apk/);
    const missing = await run(A, { command: "install_apk", location: { kind: "filesystem", path: "/nonexistent/x.apk", declaredPath: "x.apk" } });
    assert.equal(missing.status, "internal_error");
    assert.match(missing.message, /not found on this host/);
    const mpm = await run(A, { command: "install_apk", location: { kind: "mpm", packageName: "some/store", label: "v1", path: "2048.apk" } });
    assert.equal(mpm.status, "failed_precondition");
    // With an APK folder holding the file, mpm installs like filesystem.
    const dir = fs.mkdtempSync("/tmp/farm-apks-");
    fs.copyFileSync(path.join(APKS, "classic_2048.apk"), path.join(dir, "2048-debug.apk"));
    const mpm2 = await A.execute({ timeoutSec: 0, cmd: { command: "install_apk", location: { kind: "mpm", packageName: "s", label: "v", path: "2048-debug.apk" } } }, { apkDirs: [dir] });
    assertOk(mpm2, "mpm via apk dir");
    fs.rmSync(dir, { recursive: true });
  });

  test("start_activity, get_current_activity, app-screen match, force_stop", async () => {
    const r = await run(A, { command: "start_activity", fullActivity: NOTES_MAIN, extraArgs: [], forceStop: true });
    assertOk(r, "start");
    assert.equal(r.data?.kind === "start_activity" && r.data.fullActivity, NOTES_MAIN);
    assert.equal(await currentActivity(A), NOTES_MAIN);
    assert.equal(await A.matchAppScreen({ activity: NOTES_MAIN, viewHierarchyPath: [] }), "SUCCESS");
    assert.equal(await A.matchAppScreen({ activity: G2048_MAIN, viewHierarchyPath: [] }), "UNEXPECTED_ACTIVITY");
    assert.equal(await A.matchAppScreen({ activity: "", viewHierarchyPath: [] }), "EMPTY_EXPECTED_ACTIVITY");
    assert.equal(await A.matchAppScreen({ activity: NOTES_MAIN, viewHierarchyPath: [pyRegex("^DecorView@.*\\[MainActivity\\]$")] }), "SUCCESS");
    assert.equal(await A.matchAppScreen({ activity: NOTES_MAIN, viewHierarchyPath: [pyRegex("^DecorView@.*\\[NoteActivity\\]$")] }), "UNEXPECTED_VIEW_HIERARCHY");
    const bad = await run(A, { command: "start_activity", fullActivity: `${NOTES}/${NOTES}.NoSuchActivity`, extraArgs: [], forceStop: false });
    // am exits 0 here, as on Android: the step fails because the output says `Error`.
    assert.equal(bad.status, "internal_error");
    assert.match(bad.message, /does not exist/);
    assert.equal((await run(A, { command: "start_activity", fullActivity: "", extraArgs: [], forceStop: false })).status, "failed_precondition");
    assertOk(await run(A, { command: "force_stop", packageName: NOTES }), "force_stop");
    assert.notEqual(await currentActivity(A), NOTES_MAIN);
  });

  test("tap and press_button reach the app", async () => {
    assertOk(await run(A, { command: "start_activity", fullActivity: NOTES_MAIN, extraArgs: [], forceStop: true }), "start");
    const size = await A.screenSize();
    assert.ok("width" in size, JSON.stringify(size));
    // Note 0 opens NoteActivity; BACK returns to MainActivity.
    assertOk(await run(A, { command: "tap", x: Math.round(size.width / 2), y: Math.round(0.22 * size.height) }), "tap");
    await waitFor("NoteActivity", async () => (await currentActivity(A)) === `${NOTES}/${NOTES}.NoteActivity`);
    assertOk(await run(A, { command: "press_button", button: "BACK" }), "back");
    await waitFor("MainActivity", async () => (await currentActivity(A)) === NOTES_MAIN);
    assert.equal((await run(A, { command: "tap", x: -1, y: 3 })).status, "failed_precondition");
    assertOk(await run(A, { command: "press_button", button: "HOME" }), "home");
    await waitFor("launcher", async () => (await currentActivity(A)) !== NOTES_MAIN);
    assertOk(await run(A, { command: "press_button", button: "ENTER" }), "enter");
  });

  test("start_screen_pinning locks the task (HOME no longer leaves the app)", async () => {
    assertOk(await run(A, { command: "start_activity", fullActivity: NOTES_MAIN, extraArgs: [], forceStop: true }), "start");
    assertOk(await run(A, { command: "start_screen_pinning", fullActivity: NOTES_MAIN }), "pin");
    assertOk(await run(A, { command: "press_button", button: "HOME" }), "home");
    await sleep(50);
    assert.equal(await currentActivity(A), NOTES_MAIN);
    const none = await run(A, { command: "start_screen_pinning", fullActivity: G2048_MAIN });
    assert.equal(none.status, "internal_error");
    await sh(A, "am task lock stop");
    assertOk(await run(A, { command: "press_button", button: "HOME" }), "home");
    await waitFor("launcher", async () => (await currentActivity(A)) !== NOTES_MAIN);
  });

  test("uninstall_package removes; absent package is ok (idempotent)", async () => {
    assertOk(await run(A, { command: "uninstall_package", packageName: CATCH }), "uninstall");
    assert.ok(!(await packages(A)).includes(CATCH));
    const again = await run(A, { command: "uninstall_package", packageName: CATCH });
    assertOk(again, "uninstall again");
    assert.match(again.message, /not installed/);
  });

  test("push / pull round trip; pull of a missing file is an error", async () => {
    const content = new Uint8Array(200_000).map((_, i) => (i * 7) % 256);
    assertOk(await run(A, { command: "push", content, path: `${TMP}/roundtrip.bin` }), "push");
    const r = await run(A, { command: "pull", path: `${TMP}/roundtrip.bin` });
    assertOk(r, "pull");
    assert.ok(r.data?.kind === "pull");
    assert.deepEqual(Buffer.from(r.data.content), Buffer.from(content));
    const missing = await run(A, { command: "pull", path: `${TMP}/does-not-exist` });
    assert.notEqual(missing.status, "ok");
    assert.equal((await run(A, { command: "push", content, path: "" })).status, "failed_precondition");
  });

  test("input_text", async () => {
    assertOk(await run(A, { command: "input_text", text: "hello world" }), "input text");
    assert.equal((await run(A, { command: "input_text", text: "" })).status, "failed_precondition");
  });

  test("settings put/get/delete/list/reset, read back", async () => {
    assertOk(await run(A, { command: "settings", namespace: "system", action: { verb: "put", key: "user_rotation", value: "1" } }), "put");
    const g = await run(A, { command: "settings", namespace: "system", action: { verb: "get", key: "user_rotation" } });
    assertOk(g, "get");
    assert.equal(g.output.trim(), "1");
    assert.equal(await A.orientation(), 1);
    const o = await run(A, { command: "get_orientation" });
    assert.equal(o.data?.kind === "orientation" && o.data.orientation, 1);
    assertOk(await run(A, { command: "settings", namespace: "system", action: { verb: "put", key: "user_rotation", value: "0" } }), "put 0");
    assert.equal(await A.orientation(), 0);
    // Legacy disable_animations / start_accessibility_service arrive as these puts.
    for (const key of ["window_animation_scale", "transition_animation_scale", "animator_duration_scale"])
      assertOk(await run(A, { command: "settings", namespace: "global", action: { verb: "put", key, value: "0.0" } }), key);
    assertOk(await run(A, { command: "settings", namespace: "secure", action: { verb: "put", key: "enabled_accessibility_services", value: "com.x/.Svc" } }), "a11y");
    const list = await run(A, { command: "settings", namespace: "global", action: { verb: "list" } });
    assertOk(list, "list");
    assert.match(list.output, /window_animation_scale=0\.0/);
    assertOk(await run(A, { command: "settings", namespace: "secure", action: { verb: "delete", key: "enabled_accessibility_services" } }), "delete");
    const gone = await run(A, { command: "settings", namespace: "secure", action: { verb: "get", key: "enabled_accessibility_services" } });
    assert.equal(gone.output.trim(), "null");
    assertOk(await run(A, { command: "settings", namespace: "global", action: { verb: "reset", packageName: "", mode: "untrusted_defaults" } }), "reset");
    assert.equal((await run(A, { command: "settings", namespace: "system", action: { verb: "put", key: "", value: "1" } })).status, "failed_precondition");
  });

  test("package_manager list/clear/grant", async () => {
    for (const what of ["features", "libraries", "packages"] as const) {
      const r = await run(A, { command: "package_manager_list", what });
      assertOk(r, `pm list ${what}`);
      assert.ok(r.data?.kind === "list" && r.data.items.length > 0, `pm list ${what} items`);
      assert.ok(r.data.items.every((i) => !i.includes(":")) || what === "features");
    }
    // pm clear stops the app (its data is gone with it).
    assertOk(await run(A, { command: "start_activity", fullActivity: NOTES_MAIN, extraArgs: [], forceStop: true }), "start");
    assertOk(await run(A, { command: "package_manager_clear", packageName: NOTES, userId: "" }), "pm clear");
    assert.notEqual(await currentActivity(A), NOTES_MAIN);
    assertOk(await run(A, { command: "package_manager_clear", packageName: NOTES, userId: "0" }), "pm clear -f 0");
    assert.equal((await run(A, { command: "package_manager_clear", packageName: "com.absent.pkg", userId: "" })).status, "internal_error");
    const perms = ["android.permission.WRITE_SECURE_SETTINGS", "android.permission.READ_LOGS"];
    assertOk(await run(A, { command: "package_manager_grant", packageName: NOTES, permissions: perms }), "pm grant");
    const dump = await sh(A, `pm dump ${NOTES}`);
    for (const p of perms) assert.match(dump, new RegExp(`${p.replace(/\./g, "\\.")}: granted=true`));
    const badGrant = await run(A, { command: "package_manager_grant", packageName: "com.absent.pkg", permissions: perms });
    assert.equal(badGrant.status, "internal_error", badGrant.message);
    assert.equal((await run(A, { command: "package_manager_grant", packageName: NOTES, permissions: [] })).status, "failed_precondition");
  });

  test("send_broadcast, dumpsys, generic (incl. the legacy start_intent form)", async () => {
    const bc = await run(A, { command: "send_broadcast", action: "android.intent.action.AIRPLANE_MODE", component: `${NOTES}/.Receiver` });
    assertOk(bc, "broadcast");
    assert.match(bc.output, /act=android\.intent\.action\.AIRPLANE_MODE/);
    assert.match(bc.output, /cmp=com\.farm\.simapps\.notes\/\.Receiver/);
    assert.match(bc.output, /Broadcast completed: result=0/);
    assert.equal((await run(A, { command: "send_broadcast", action: "", component: "" })).status, "failed_precondition");
    const d = await run(A, { command: "dumpsys", options: { service: "input", args: [], listOnly: false, timeoutSec: 0, timeoutMs: 0, proto: false, priority: "", skipServices: [] } });
    assertOk(d, "dumpsys input");
    assert.match(d.output, /SurfaceOrientation/);
    const dl = await run(A, { command: "dumpsys", options: { service: "input", args: ["x"], listOnly: true, timeoutSec: 5, timeoutMs: 0, proto: false, priority: "CRITICAL", skipServices: [] } });
    assertOk(dl, "dumpsys -l");
    assert.match(dl.output, /Currently running services:\n(\s+\w+\n)+/);
    const neg = await run(A, { command: "dumpsys", options: { service: "input", args: [], listOnly: false, timeoutSec: -1, timeoutMs: 0, proto: false, priority: "", skipServices: [] } });
    assert.equal(neg.status, "failed_precondition");
    const g = await run(A, { command: "generic", args: ["shell", "echo", "'a  b'", '"c"'] });
    assertOk(g, "generic");
    assert.equal(g.output, "a  b c\n");
    const intent = await run(A, { command: "generic", args: ["shell", "am", "start", "-a", "android.intent.action.VIEW", "-d", "http://example.com/x?a=1&b=2", NOTES] });
    assert.notEqual(intent.status, "adb_error");
    const unknown = await run(A, { command: "generic", args: ["reboot"] });
    assert.equal(unknown.status, "unknown_command");
    const u = await A.execute({ timeoutSec: 0, cmd: { command: "rotate" } as unknown as AdbCommand });
    assert.equal(u.status, "unknown_command");
    assert.equal((await A.execute({ timeoutSec: -1, cmd: { command: "get_orientation" } })).status, "failed_precondition");
  });

  test("legacy AdbCall commands in the forms the loader maps them to (task-format.md §5.3)", async () => {
    const put = (ns: "system" | "secure" | "global", key: string, value: string): AdbCommand => ({ command: "settings", namespace: ns, action: { verb: "put", key, value } });
    const get = async (ns: "system" | "secure" | "global", key: string) => (await run(A, { command: "settings", namespace: ns, action: { verb: "get", key } })).output.trim();
    // rotate{LANDSCAPE_270}
    assertOk(await run(A, put("system", "user_rotation", "3")), "rotate");
    assert.equal(await A.orientation(), 3);
    assertOk(await run(A, put("system", "user_rotation", "0")), "rotate back");
    // disable_animations
    for (const key of ["window_animation_scale", "transition_animation_scale", "animator_duration_scale"]) {
      assertOk(await run(A, put("global", key, "0.0")), key);
      assert.equal(await get("global", key), "0.0");
    }
    // start_accessibility_service
    assertOk(await run(A, put("secure", "enabled_accessibility_services", "com.google.androidenv.accessibilityforwarder/.AccessibilityForwarder")), "a11y");
    assert.equal(await get("secure", "enabled_accessibility_services"), "com.google.androidenv.accessibilityforwarder/.AccessibilityForwarder");
    // grant_permissions
    assertOk(await run(A, { command: "package_manager_grant", packageName: NOTES, permissions: ["android.permission.CAMERA"] }), "grant");
    assert.match(await sh(A, `pm dump ${NOTES}`), /android\.permission\.CAMERA: granted=true/);
    // start_intent{data_uri, action, package_name}
    const intent = await run(A, { command: "generic", args: ["shell", "am", "start", "-a", "android.intent.action.VIEW", "-d", "http://example.com/?a=1&b=2", NOTES] });
    assertOk(intent, "start_intent");
    assert.match(intent.output, /dat=http:\/\/example\.com\/\?a=1&b=2/);
    assert.equal(await currentActivity(A), NOTES_MAIN);
    // start_random_activity (as the episode runner composes it): start with -S, wait for it as the app screen …
    const pick = NOTES_MAIN;
    assertOk(await run(A, { command: "start_activity", fullActivity: pick, extraArgs: ["--ez", '"RL_TASK_ENABLED"', '"true"'], forceStop: true }), "random start");
    await waitFor("random activity on screen", async () => (await A.matchAppScreen({ activity: pick, viewHierarchyPath: [] })) === "SUCCESS");
    // … force_stop_random_activity, clear_cache_random_activity (pm clear, farm rule)
    assertOk(await run(A, { command: "force_stop", packageName: NOTES }), "force_stop_random_activity");
    assert.notEqual(await currentActivity(A), pick);
    assertOk(await run(A, { command: "package_manager_clear", packageName: NOTES, userId: "" }), "clear_cache_random_activity");
  });

  test("screenshots: raw framebuffer and PNG", async () => {
    const shot = await A.screenshot();
    assert.ok("rgba" in shot, JSON.stringify(shot));
    assert.equal(shot.rgba.length, shot.width * shot.height * 4);
    const size = await A.screenSize();
    assert.deepEqual(size, { width: shot.width, height: shot.height });
    const png = await A.screenshotPng();
    assert.ok(png instanceof Uint8Array, JSON.stringify(png));
    assert.equal(Buffer.from(png.subarray(1, 4)).toString(), "PNG");
  });

  test("metrics hook: one event per public operation, a small closed op vocabulary", async () => {
    assert.ok(events.some((e) => e.op === "step:install_apk" && e.status === "ok" && e.serial === A.serial));
    assert.ok(events.some((e) => e.status === "failed_precondition"));
    const n = events.length;
    // install = push + pm install + rm on the device, yet one event.
    await run(A, { command: "install_apk", location: { kind: "filesystem", path: path.join(APKS, "sim_notes.apk"), declaredPath: "x" } });
    assert.deepEqual(events.slice(n).map((e) => e.op), ["step:install_apk"]);
    await A.execute({ timeoutSec: 0, cmd: { command: "no_such_kind" } as unknown as AdbCommand });
    assert.equal(events[events.length - 1]!.op, "step:unknown");
    const ops = new Set(events.map((e) => e.op));
    assert.ok([...ops].every((op) => /^[a-z_]+(:[a-z_]+)?$/.test(op)), [...ops].join(" "));
    assert.ok(ops.size <= 40, `${ops.size} ops`);
  });
});

describe("quoting: nothing from a task or job can run a second command", () => {
  const payloads = (tag: string) => [
    `; echo pwned > ${TMP}/pwn_${tag}_semi`,
    `$(echo pwned > ${TMP}/pwn_${tag}_subst)`,
    `\`echo pwned > ${TMP}/pwn_${tag}_tick\``,
    `| echo pwned > ${TMP}/pwn_${tag}_pipe`,
    `&& echo pwned > ${TMP}/pwn_${tag}_and`,
    `'; echo pwned > ${TMP}/pwn_${tag}_sq; '`,
    `"; echo pwned > ${TMP}/pwn_${tag}_dq; "`,
  ];

  test("injection through every task-controlled field", async () => {
    assert.equal((await run(A, { command: "force_stop", packageName: `com.x; echo pwned > ${TMP}/pwn_pkg` })).status, "failed_precondition");
    assert.equal((await run(A, { command: "start_activity", fullActivity: `${NOTES}/$(echo pwned > ${TMP}/pwn_act)`, extraArgs: [], forceStop: false })).status, "failed_precondition");
    assert.equal((await run(A, { command: "uninstall_package", packageName: `a.b$(echo pwned > ${TMP}/pwn_un)` })).status, "failed_precondition");
    for (const p of payloads("x")) {
      // Balanced quoting only; unbalanced payloads are rejected as failed_precondition, which is also safe.
      const r = await run(A, { command: "start_activity", fullActivity: NOTES_MAIN, extraArgs: ["--es", "k", p], forceStop: false });
      assert.ok(r.status === "ok" || r.status === "failed_precondition" || r.status === "internal_error", r.message);
    }
    for (const p of payloads("it")) assert.notEqual((await run(A, { command: "input_text", text: p })).status, "adb_error");
    for (const p of payloads("set")) await run(A, { command: "settings", namespace: "global", action: { verb: "put", key: "farm_test", value: p } });
    for (const p of payloads("gen")) await run(A, { command: "generic", args: ["shell", "echo", p] });
    for (const p of payloads("dump")) await run(A, { command: "dumpsys", options: { service: "activity", args: [p], listOnly: false, timeoutSec: 0, timeoutMs: 0, proto: false, priority: "", skipServices: [] } });
    await run(A, { command: "package_manager_grant", packageName: NOTES, permissions: [`x; echo pwned > ${TMP}/pwn_perm`] });
    await run(A, { command: "send_broadcast", action: `a; echo pwned > ${TMP}/pwn_bc`, component: "" });
    await run(A, { command: "settings", namespace: "global", action: { verb: "get", key: `k; echo pwned > ${TMP}/pwn_key` } });
    await run(A, { command: "pull", path: `${TMP}/x; echo pwned > ${TMP}/pwn_pull` });
    // A settings value with shell syntax is stored verbatim.
    const v = `$(echo pwned > ${TMP}/pwn_val) 'q' "d" \`t\``;
    assertOk(await run(A, { command: "settings", namespace: "global", action: { verb: "put", key: "farm_literal", value: v } }), "put literal");
    const g = await run(A, { command: "settings", namespace: "global", action: { verb: "get", key: "farm_literal" } });
    assert.equal(g.output.replace(/\n$/, ""), v);
    // A control: the same redirect typed by the farm itself does create a file, so the check is meaningful.
    await sh(A, `echo ok > ${TMP}/control_file`);
    const files = await tmpFiles(A);
    assert.match(files, /control_file/);
    assert.doesNotMatch(files, /pwn/);
  });

  test("AndroidEnv extra_args forms arrive at the app exactly (RL flag and JSON config)", async () => {
    const log = await A.openLogcat({ filters: ["AndroidRLTask:V"], clear: true });
    const recs: LogcatRecord[] = [];
    log.onRecord((r) => recs.push(r));
    try {
      // As in task files: inner double quotes for the device shell; the JSON built from adjacent strings.
      const config = '"{""\\"target\\": 0, ""\\"note\\": \\"a b; c\\"""}"';
      const r = await run(A, {
        command: "start_activity",
        fullActivity: NOTES_MAIN,
        extraArgs: ["--ez", '"RL_TASK_ENABLED"', '"true"', "--es", '"RL_TASK_GAME_CONFIG"', config],
        forceStop: true,
      });
      assertOk(r, "start with extras");
      const size = await A.screenSize();
      assert.ok("width" in size);
      // target 0 came from the config: opening note 0 is rewarded (the default target is 2).
      assertOk(await run(A, { command: "tap", x: Math.round(size.width / 2), y: Math.round(0.22 * size.height) }), "tap note 0");
      await waitFor("reward line", () => recs.some((x) => x.message === "reward: 1"));
      assert.ok(recs.some((x) => x.message === 'json_extra: {"opened": 0}'));
      assert.ok(!recs.some((x) => /invalid RL_TASK_GAME_CONFIG/.test(x.message)), recs.map((x) => x.message).join("\n"));
      assert.equal(log.state, "open");
    } finally {
      await log.close();
    }
  });
});

describe("action channel", () => {
  test("touch down/move/up, tap, swipe, key events over one stream", async () => {
    assertOk(await run(A, { command: "start_activity", fullActivity: NOTES_MAIN, extraArgs: [], forceStop: true }), "start");
    const size = await A.screenSize();
    assert.ok("width" in size);
    const ch = await A.openActionChannel();
    try {
      const x = Math.round(size.width / 2);
      const y = Math.round(0.42 * size.height);
      assertOk(await ch.touchDown(x, y), "down");
      assertOk(await ch.touchMove(x + 1, y), "move");
      assertOk(await ch.touchUp(x + 1, y), "up");
      await waitFor("note opened by gesture", async () => (await currentActivity(A)) === `${NOTES}/${NOTES}.NoteActivity`);
      assertOk(await ch.keyEvent("KEYCODE_BACK"), "back");
      await waitFor("main", async () => (await currentActivity(A)) === NOTES_MAIN);
      assertOk(await ch.tap(x, y), "tap");
      await waitFor("note opened by tap", async () => (await currentActivity(A)) === `${NOTES}/${NOTES}.NoteActivity`);
      assertOk(await ch.keyEvent("4"), "back by number");
      assertOk(await ch.swipe(10, 10, 200, 200, 20), "swipe");
      assert.equal((await ch.touchMove(-1, 0)).status, "failed_precondition");
      assert.equal((await ch.keyEvent("KEYCODE_HOME; reboot")).status, "failed_precondition");
      // Concurrent callers are serialised, each gets its own result.
      const rs = await Promise.all(Array.from({ length: 20 }, (_, i) => ch.touchMove(10 + i, 10)));
      assert.ok(rs.every((r) => r.status === "ok"));
      await ch.touchUp(29, 10);
    } finally {
      await ch.close();
    }
    assert.equal((await ch.tap(1, 1)).status, "failed_precondition");
  });
});

describe("faults (device B)", () => {
  test("a hung device yields timeouts within the deadline, then recovers", async () => {
    const sim = sims.devices[1]!;
    const ch = await B.openActionChannel();
    assertOk(await ch.touchMove(5, 5), "before hang");
    sim.faults.hang(true);
    try {
      let t0 = performance.now();
      const r = await run(B, { command: "get_current_activity" }, 0.5);
      let dt = performance.now() - t0;
      assert.equal(r.status, "timeout", r.message);
      assert.ok(dt >= 450 && dt < 900, `step took ${dt} ms for a 500 ms deadline`);
      t0 = performance.now();
      const s = await B.shell("echo hi", { timeoutMs: 300 });
      dt = performance.now() - t0;
      assert.equal(s.status, "timeout");
      assert.ok(dt >= 250 && dt < 700, `shell took ${dt} ms for 300 ms`);
      t0 = performance.now();
      const a = await ch.touchMove(6, 6);
      dt = performance.now() - t0;
      assert.equal(a.status, "timeout");
      assert.ok(dt >= 950 && dt < 1500, `action took ${dt} ms for 1000 ms`);
      assert.equal(await B.matchAppScreen({ activity: NOTES_MAIN, viewHierarchyPath: [] }, { timeoutMs: 300 }), "FAILED_ACTIVITY_EXTRACTION");
      assert.equal((await B.probe({ timeoutMs: 300 })).status, "timeout");
      assert.equal(await B.state(), "device"); // the server still lists it: only the probe tells
      const shot = await B.screenshot({ timeoutMs: 300 });
      assert.ok(!("rgba" in shot) && shot.status === "timeout");
    } finally {
      sim.faults.hang(false);
    }
    assert.equal((await B.shell("echo back", { timeoutMs: 3000 })).stdout, "back\n");
    assertOk(await B.probe(), "probe after the hang");
    assertOk(await ch.touchMove(7, 7), "channel reopened after the hang");
    await ch.close();
  });

  test("a dropped device yields a clear adb_error; the driver recovers when it comes back; logcat survives", async () => {
    const sim = sims.devices[1]!;
    const log = await B.openLogcat({ filters: ["ActivityManager:V", "ActivityTaskManager:V"], clear: true });
    const recs: LogcatRecord[] = [];
    log.onRecord((r) => recs.push(r));
    assertOk(await run(B, { command: "start_activity", fullActivity: NOTES_MAIN, extraArgs: [], forceStop: true }), "start before drop");
    await waitFor("records before the drop", () => recs.length > 0);
    const ch = await B.openActionChannel();
    assertOk(await ch.touchMove(1, 1), "before drop");
    sim.faults.dropConnection();
    await waitFor("tracker remove", () => changes.some((c) => c.serial === serialB && c.kind === "remove"));
    const r = await run(B, { command: "get_current_activity" });
    assert.equal(r.status, "adb_error");
    assert.equal(r.message, `device '${serialB}' not found on adb server 127.0.0.1:${adb.port}`);
    assert.equal(await B.state(), "gone");
    const a = await ch.touchMove(2, 2);
    assert.equal(a.status, "adb_error");
    assert.match(a.message, /not found|closed/);
    sim.faults.reconnect();
    await waitFor("tracker back", () => tracking.devices().some((d) => d.serial === serialB && d.state === "device"));
    assert.equal((await B.shell("echo again", { timeoutMs: 3000 })).stdout, "again\n");
    assertOk(await ch.touchMove(3, 3), "channel after reconnect");
    await ch.close();
    // Logcat reopened by itself and delivers new lines.
    await waitFor("logcat open again", () => log.state === "open", 5000);
    const before = recs.length;
    assertOk(await run(B, { command: "install_apk", location: { kind: "filesystem", path: path.join(APKS, "sim_notes.apk"), declaredPath: "x" } }), "install on B");
    assertOk(await run(B, { command: "start_activity", fullActivity: NOTES_MAIN, extraArgs: [], forceStop: true }), "start on B");
    await waitFor("new logcat lines after reconnect", () => recs.length > before && recs.slice(before).some((x) => /notes/.test(x.message)));
    assert.equal(log.state, "open");
    // The reopened logcat replays the device's buffer; nothing is delivered twice.
    const keys = recs.map((x) => `${x.timestampSec} ${x.pid} ${x.tid} ${x.priority} ${x.tag} ${x.message}`);
    assert.equal(new Set(keys).size, keys.length, "duplicate records after the reopen");
    // Gone for good: the stream reports failure after its budget.
    let failed = "";
    log.onFailed((why) => (failed = why));
    sim.faults.dropConnection();
    await waitFor("logcat failed", () => log.state === "failed", 10_000);
    assert.match(failed, /reopen attempts failed/);
    await log.close();
    sim.faults.reconnect();
    await waitFor("tracker back again", () => tracking.devices().some((d) => d.serial === serialB && d.state === "device"));
  });

  test("a device that vanishes mid-command yields adb_error, not a truncated ok", async () => {
    const sim = sims.devices[1]!;
    const pending = B.shell("sleep 2; echo late", { timeoutMs: 5000 });
    const step = run(B, { command: "generic", args: ["shell", "sleep", "2"] }, 5);
    await sleep(300);
    sim.faults.dropConnection();
    const [r, s2] = await Promise.all([pending, step]);
    assert.equal(r.status, "adb_error");
    assert.match(r.message, new RegExp(`device '${serialB}' went away during`));
    assert.equal(s2.status, "adb_error", s2.message);
    assert.ok(r.durationMs < 1500, `${r.durationMs} ms`);
    sim.faults.reconnect();
    await waitFor("B back", async () => (await B.probe({ timeoutMs: 500 })).status === "ok", 5000);
  });

  test("the tracker follows an adb server restart; calls work again afterwards", async () => {
    const seen = changes.length;
    await adb.restart();
    await waitFor("tracker re-adds both devices", () => tracking.devices().filter((d) => d.state === "device").length === 2 && changes.length > seen, 10_000);
    assert.equal((await A.shell("echo after-restart", { timeoutMs: 3000 })).stdout, "after-restart\n");
  });

  test("an unreachable adb server is an adb_error, and the driver never starts one", async () => {
    const port = await freePort();
    const d = new AdbDriver({ port, queryTimeoutMs: 2000, trackerRetryMs: 100 });
    const t = d.trackDevices(() => undefined);
    const l = await d.listDevices();
    assert.ok(!Array.isArray(l) && l.status === "adb_error", JSON.stringify(l));
    assert.equal(l.message, `no adb server answers at 127.0.0.1:${port} (connection refused); the driver never starts or restarts it`);
    const r = await d.device("emulator-5000").shell("echo");
    assert.equal(r.status, "adb_error");
    await sleep(300); // a few tracker retries
    // adbkit would have run `adb -P <port> start-server` here; nothing may answer on the port.
    assert.equal(await adbServerAnswers(port), false);
    t.close();
    await d.close();
  });
});
