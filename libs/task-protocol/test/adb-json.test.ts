/**
 * AdbRequest / AdbResponse in protobuf's JSON mapping: what Python's protobuf (Debian's /usr/bin/python3, the stubs
 * farm_client ships) writes for every request kind decodes into the farm's typed requests, and what the farm answers
 * parses back into `AdbResponse` messages there; the parser's rules (both spellings, null, enum numbers, base64 forms,
 * oneofs, unknown fields) hold.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { adbRequestSchema, toAdbResponseJson, toTypedRequest } from "../src/adb-json.ts";
import { firstIssue } from "../src/wire.ts";

const run = promisify(execFile);
const PYTHON = "/usr/bin/python3";
const CLIENT_DIR = path.resolve(import.meta.dirname, "../../../clients/python");
const schema = adbRequestSchema({ maxContentBytes: 1024, maxStringChars: 1000, maxRepeated: 10 });
const decode = (j: unknown) => {
  const r = schema.safeParse(j);
  if (!r.success) throw new Error(firstIssue(r.error, "request"));
  return toTypedRequest(r.data);
};
const refusal = (j: unknown): string => {
  const r = schema.safeParse(j);
  assert.ok(!r.success, `accepted ${JSON.stringify(j)}`);
  return firstIssue(r.error, "request");
};

const PY_REQUESTS = `
import json, sys
from google.protobuf import json_format
from farm_client.android_env_proto import adb_pb2 as pb
R = pb.AdbRequest
reqs = [
  R(install_apk=R.InstallApk(blob=R.InstallApk.Blob(contents=b"\\x00\\xffAPK")), timeout_sec=2.5),
  R(install_apk=R.InstallApk(filesystem=R.InstallApk.Filesystem(path="apps/a.apk"))),
  R(start_activity=R.StartActivity(full_activity="com.a/.Main", extra_args=["--ez", "x", "true"], force_stop=True)),
  R(force_stop=R.ForceStop(package_name="com.a")),
  R(tap=R.Tap(x=10, y=0)),
  R(press_button=R.PressButton(button=R.PressButton.BACK)),
  R(press_button=R.PressButton(button=R.PressButton.HOME)),
  R(start_screen_pinning=R.StartScreenPinning(full_activity="com.a/.Main")),
  R(uninstall_package=R.UninstallPackage(package_name="com.a")),
  R(get_current_activity=R.GetCurrentActivity()),
  R(get_orientation=R.GetOrientationRequest()),
  R(push=R.Push(content=b"hello", path="/sdcard/h.txt")),
  R(pull=R.Pull(path="/sdcard/h.txt")),
  R(input_text=R.InputText(text="hi there")),
  R(settings=R.SettingsRequest(name_space=R.SettingsRequest.Namespace.SYSTEM, put=R.SettingsRequest.Put(key="screen_brightness", value="255"))),
  R(settings=R.SettingsRequest(name_space=R.SettingsRequest.Namespace.SECURE, delete_key=R.SettingsRequest.Delete(key="k"))),
  R(settings=R.SettingsRequest(name_space=R.SettingsRequest.Namespace.GLOBAL, reset=R.SettingsRequest.Reset(package_name="com.a", mode=R.SettingsRequest.Reset.Mode.UNTRUSTED_CLEAR))),
  R(settings=R.SettingsRequest(name_space=R.SettingsRequest.Namespace.GLOBAL, list=R.SettingsRequest.List())),
  R(generic=R.GenericRequest(args=["shell", "svc", "wifi", "enable"])),
  R(package_manager=R.PackageManagerRequest(list=R.PackageManagerRequest.List(packages=R.PackageManagerRequest.List.Packages(filter="google")))),
  R(package_manager=R.PackageManagerRequest(list=R.PackageManagerRequest.List(features=R.PackageManagerRequest.List.Features()))),
  R(package_manager=R.PackageManagerRequest(clear=R.PackageManagerRequest.Clear(package_name="com.a", user_id="0"))),
  R(package_manager=R.PackageManagerRequest(grant=R.PackageManagerRequest.Grant(package_name="com.a", permissions=["android.permission.CAMERA"]))),
  R(dumpsys=R.DumpsysRequest(service="window", args=["-a"], priority=R.DumpsysRequest.PriorityLevel.HIGH, timeout_ms=500)),
  R(send_broadcast=R.SendBroadcast(action="a.b.C", component="com.a/.R")),
]
print(json.dumps([json_format.MessageToDict(r) for r in reqs]))
`;

test("every request kind Python's protobuf writes decodes into the farm's typed request", async () => {
  const { stdout } = await run(PYTHON, ["-c", PY_REQUESTS], { cwd: CLIENT_DIR, timeout: 30_000 });
  const got = (JSON.parse(stdout) as unknown[]).map((j) => {
    const d = decode(j);
    return [d.member, d.request.timeoutSec, d.request.cmd, d.packagesFilter];
  });
  const u8 = (s: string) => new Uint8Array(Buffer.from(s, "latin1"));
  assert.deepEqual(got, [
    ["install_apk", 2.5, { command: "install_apk", location: { kind: "blob", contents: u8("\x00\xffAPK") } }, undefined],
    ["install_apk", 0, { command: "install_apk", location: { kind: "filesystem", path: "apps/a.apk", declaredPath: "apps/a.apk" } }, undefined],
    ["start_activity", 0, { command: "start_activity", fullActivity: "com.a/.Main", extraArgs: ["--ez", "x", "true"], forceStop: true }, undefined],
    ["force_stop", 0, { command: "force_stop", packageName: "com.a" }, undefined],
    ["tap", 0, { command: "tap", x: 10, y: 0 }, undefined],
    ["press_button", 0, { command: "press_button", button: "BACK" }, undefined],
    ["press_button", 0, { command: "press_button", button: "HOME" }, undefined],
    ["start_screen_pinning", 0, { command: "start_screen_pinning", fullActivity: "com.a/.Main" }, undefined],
    ["uninstall_package", 0, { command: "uninstall_package", packageName: "com.a" }, undefined],
    ["get_current_activity", 0, { command: "get_current_activity" }, undefined],
    ["get_orientation", 0, { command: "get_orientation" }, undefined],
    ["push", 0, { command: "push", content: u8("hello"), path: "/sdcard/h.txt" }, undefined],
    ["pull", 0, { command: "pull", path: "/sdcard/h.txt" }, undefined],
    ["input_text", 0, { command: "input_text", text: "hi there" }, undefined],
    ["settings", 0, { command: "settings", namespace: "system", action: { verb: "put", key: "screen_brightness", value: "255" } }, undefined],
    ["settings", 0, { command: "settings", namespace: "secure", action: { verb: "delete", key: "k" } }, undefined],
    ["settings", 0, { command: "settings", namespace: "global", action: { verb: "reset", packageName: "com.a", mode: "untrusted_clear" } }, undefined],
    ["settings", 0, { command: "settings", namespace: "global", action: { verb: "list" } }, undefined],
    ["generic", 0, { command: "generic", args: ["shell", "svc", "wifi", "enable"] }, undefined],
    ["package_manager", 0, { command: "package_manager_list", what: "packages" }, "google"],
    ["package_manager", 0, { command: "package_manager_list", what: "features" }, undefined],
    ["package_manager", 0, { command: "package_manager_clear", packageName: "com.a", userId: "0" }, undefined],
    ["package_manager", 0, { command: "package_manager_grant", packageName: "com.a", permissions: ["android.permission.CAMERA"] }, undefined],
    ["dumpsys", 0, { command: "dumpsys", options: { service: "window", args: ["-a"], listOnly: false, timeoutSec: 0, timeoutMs: 500, proto: false, priority: "HIGH", skipServices: [] } }, undefined],
    ["send_broadcast", 0, { command: "send_broadcast", action: "a.b.C", component: "com.a/.R" }, undefined],
  ]);
});

test("the farm's AdbResponse JSON parses in Python into the messages AndroidWorld reads", async () => {
  const ok = { status: "ok" as const, message: "", durationMs: 1 };
  const answers = [
    toAdbResponseJson("generic", { ...ok, output: "1\n" }),
    toAdbResponseJson("generic", { status: "timeout", message: "shell: no answer within 5000 ms", output: "", durationMs: 5000 }),
    toAdbResponseJson("get_current_activity", { ...ok, output: "", data: { kind: "current_activity", fullActivity: "com.a/.Main" } }),
    toAdbResponseJson("pull", { ...ok, output: "", data: { kind: "pull", content: new Uint8Array([0, 255, 10]) } }),
    toAdbResponseJson("package_manager", { ...ok, output: "package:com.google.x\npackage:com.a\n", data: { kind: "list", items: ["com.google.x", "com.a"] } }, { packagesFilter: "google" }),
    toAdbResponseJson("get_orientation", { ...ok, output: "", data: { kind: "orientation", orientation: 1 } }),
    toAdbResponseJson("settings", { status: "unknown_command", message: "nope", output: "", durationMs: 0 }),
  ];
  const script = `
import json, sys
from google.protobuf import json_format
from farm_client.android_env_proto import adb_pb2 as pb
out = []
for a in json.loads(sys.stdin.read()):
    r = json_format.ParseDict(a, pb.AdbResponse())
    out.append([pb.AdbResponse.Status.Name(r.status), r.error_message, r.WhichOneof("payload"),
                r.generic.output.decode(), r.get_current_activity.full_activity, list(r.pull.content),
                list(r.package_manager.list.items), r.get_orientation.orientation])
print(json.dumps(out))
`;
  const child = execFile(PYTHON, ["-c", script], { cwd: CLIENT_DIR, timeout: 30_000 });
  child.stdin!.end(JSON.stringify(answers));
  const stdout = await new Promise<string>((resolve, reject) => {
    let out = "";
    let err = "";
    child.stdout!.on("data", (d: Buffer) => (out += d));
    child.stderr!.on("data", (d: Buffer) => (err += d));
    child.on("exit", (code) => (code === 0 ? resolve(out) : reject(new Error(err))));
  });
  assert.deepEqual(JSON.parse(stdout), [
    ["OK", "", "generic", "1\n", "", [], [], 0],
    ["TIMEOUT", "shell: no answer within 5000 ms", "generic", "", "", [], [], 0],
    ["OK", "", "get_current_activity", "", "com.a/.Main", [], [], 0],
    ["OK", "", "pull", "", "", [0, 255, 10], [], 0],
    ["OK", "", "package_manager", "", "", [], ["com.google.x"], 0],
    ["OK", "", "get_orientation", "", "", [], [], 1],
    ["UNKNOWN_COMMAND", "nope", "settings", "", "", [], [], 0],
  ]);
});

test("the JSON mapping's parser rules", () => {
  // Proto names as well as JSON names; null is the default; enum numbers; int32 and float as strings.
  assert.deepEqual(decode({ start_activity: { full_activity: "a/.B", extraArgs: null }, timeout_sec: "1.5" }).request, {
    timeoutSec: 1.5,
    cmd: { command: "start_activity", fullActivity: "a/.B", extraArgs: [], forceStop: false },
  });
  assert.deepEqual(decode({ pressButton: { button: 2 } }).request.cmd, { command: "press_button", button: "ENTER" });
  assert.deepEqual(decode({ tap: { x: "7", y: -0 } }).request.cmd, { command: "tap", x: 7, y: -0 });
  // URL-safe base64 without padding.
  const push = decode({ push: { content: Buffer.from([251, 255]).toString("base64url"), path: "/p" } }).request.cmd;
  assert.ok(push.command === "push" && Buffer.from(push.content).equals(Buffer.from([251, 255])));
  // UNKNOWN namespace, pm list options: answered by the farm as FAILED_PRECONDITION, not sent to the device.
  assert.match(decode({ settings: { get: { key: "k" } } }).unsupported ?? "", /name_space is UNKNOWN/);
  assert.match(decode({ packageManager: { list: { packages: { options: ["-3"] } } } }).unsupported ?? "", /options are not supported/);

  assert.match(refusal({ startActivity: { fullActivity: "a", full_activity: "b" } }), /field full_activity is given twice/);
  assert.match(refusal({ tap: { x: 1, z: 2 } }), /request\.tap: Unrecognized key: "z"/);
  assert.match(refusal({}), /one of install_apk, .* must be set/);
  assert.match(refusal({ tap: {}, pull: {} }), /only one of tap, pull may be set/);
  assert.match(refusal({ pressButton: { button: 7 } }), /enum value 7 is not one of 0..2/);
  assert.match(refusal({ pressButton: { button: "POWER" } }), /request\.press_button\.button/);
  assert.match(refusal({ tap: { x: 2 ** 31, y: 0 } }), /int32/);
  assert.match(refusal({ tap: { x: 1.5, y: 0 } }), /request\.tap\.x/);
  assert.match(refusal({ getCurrentActivity: {}, timeoutSec: "NaN" }), /timeout_sec/);
  assert.match(refusal({ push: { content: "not base64!", path: "/p" } }), /base64/);
  assert.match(refusal({ push: { content: Buffer.alloc(2000).toString("base64"), path: "/p" } }), /2000 bytes, more than 1024/);
  assert.match(refusal({ generic: { args: Array(11).fill("x") } }), /request\.generic\.args/);
  assert.match(refusal({ installApk: { filesystem: { path: "a" }, blob: { contents: "" } } }), /oneof InstallApk\.location/);
  assert.match(refusal([1, 2]), /request: /);
  assert.match(refusal({ settings: { nameSpace: "GLOBAL", get: { key: "a" }, put: { key: "a", value: "b" } } }), /oneof SettingsRequest\.verb/);
  assert.match(refusal({ __proto__: { tap: {} } }), /one of install_apk/);
});
