/** The `emulator` command line and the AVD home, as the emulator reads them (no processes). */
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseEmulatorArgs } from "../src/emulator/launcher/args.ts";
import { avdHome, createAvd, readAvd, listAvds } from "../src/emulator/launcher/avd.ts";
import { parseFaults } from "../src/emulator/launcher/boot-profile.ts";
import { renderDiscovery, parseDiscovery, discoveryDirectory } from "../src/emulator/discovery.ts";

test("AndroidEnv's launch command line parses: ports, gRPC, snapshot; display and hardware options are accepted and ignored", () => {
  const a = parseEmulatorArgs([
    "-adb-path", "/usr/bin/adb", "-gpu", "swiftshader_indirect", "-no-audio", "-show-kernel", "-verbose", "-avd", "Pixel",
    "-grpc", "8554", "-no-skin", "-no-window", "-ports", "5554,5555", "-snapshot", "clean", "-feature", "AllowSnapshotMigration,MigratableSnapshotSave",
    "-network-user-mode-options", "restrict=y", "-wifi-user-mode-options", "restrict=y",
  ]);
  assert.equal(a.avd, "Pixel");
  assert.equal(a.consolePort, 5554);
  assert.equal(a.adbPort, 5555);
  assert.equal(a.grpcPort, 8554);
  assert.equal(a.snapshot, "clean");
  assert.equal(a.verbose, true);
  assert.ok(a.ignored.includes("-gpu") && a.ignored.includes("-no-window") && a.ignored.includes("restrict=y"));
  assert.equal(parseEmulatorArgs(["@Pixel", "-port", "5560", "-no-snapshot", "-read-only"]).consolePort, 5560);
  assert.equal(parseEmulatorArgs(["@Pixel", "-qemu", "-m", "2048", "-whatever"]).avd, "Pixel", "everything after -qemu goes to QEMU");
});

test("-ports takes any two ports, as the emulator does (AndroidEnv: a random console port, adb in 5555..5585)", () => {
  const a = parseEmulatorArgs(["-avd", "P", "-ports", "45725,5555"]);
  assert.deepEqual([a.consolePort, a.adbPort], [45725, 5555]);
  const b = parseEmulatorArgs(["-avd", "P", "-ports", "5600,5557"]);
  assert.deepEqual([b.consolePort, b.adbPort], [5600, 5557]);
  const c = parseEmulatorArgs(["-avd", "P", "-port", "5560"]);
  assert.deepEqual([c.consolePort, c.adbPort], [5560, 5561], "-port C: adb on C+1");
});

test("bad command lines are refused with the option named", () => {
  assert.throws(() => parseEmulatorArgs(["-avd", "P", "-nope"]), /unknown option: -nope/);
  assert.throws(() => parseEmulatorArgs(["-avd"]), /-avd needs a value/);
  assert.throws(() => parseEmulatorArgs(["-ports", "5554,5554"]), /console and adb ports must differ/);
  assert.throws(() => parseEmulatorArgs(["-ports", "5554,70000"]), /'70000' is not a port number/);
  assert.throws(() => parseEmulatorArgs(["-ports", "5554"]), /<console port>,<adb port>/);
  assert.throws(() => parseEmulatorArgs(["-grpc", "99999"]), /not a port number/);
  assert.throws(() => parseEmulatorArgs(["Pixel"]), /use '@Pixel'/);
  assert.throws(() => parseFaults("crash-after-ms=soon"), /needs milliseconds/);
  assert.throws(() => parseFaults("explode=1"), /unknown fault 'explode'/);
  assert.deepEqual(parseFaults("crash-after-ms=5,tap-drop=0.5"), { crashAfterMs: 5, tapDrop: 0.5 });
});

test("AVD home: ANDROID_AVD_HOME, then ANDROID_SDK_HOME/(.android/)avd, ANDROID_USER_HOME/avd, ~/.android/avd", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "avd-home-"));
  try {
    const avdHomeDir = path.join(root, "avds");
    fs.mkdirSync(avdHomeDir);
    fs.mkdirSync(path.join(root, "sdkhome", ".android", "avd"), { recursive: true });
    assert.equal(avdHome({ ANDROID_AVD_HOME: avdHomeDir, HOME: root }), avdHomeDir);
    assert.equal(avdHome({ ANDROID_SDK_HOME: path.join(root, "sdkhome"), HOME: root }), path.join(root, "sdkhome", ".android", "avd"));
    assert.equal(avdHome({ ANDROID_USER_HOME: path.join(root, "user"), HOME: root }), path.join(root, "user", "avd"));
    assert.equal(avdHome({ HOME: root }), path.join(root, ".android", "avd"));

    createAvd(avdHomeDir, "Tablet", { width: 1200, height: 1920 });
    assert.deepEqual(listAvds(avdHomeDir), ["Tablet"]);
    assert.deepEqual(readAvd(avdHomeDir, "Tablet").screen, { width: 1200, height: 1920 });
    assert.throws(() => createAvd(avdHomeDir, "Tablet", { width: 10, height: 10 }), /out of range|already exists/);
    assert.throws(() => createAvd(avdHomeDir, "../evil", { width: 360, height: 640 }), /invalid AVD name/);
    // An AVD written by avdmanager with spaces around '=' reads the same.
    fs.writeFileSync(path.join(avdHomeDir, "Tablet.avd", "config.ini"), "hw.lcd.width = 800\nhw.lcd.height = 1280\n");
    assert.deepEqual(readAvd(avdHomeDir, "Tablet").screen, { width: 800, height: 1280 });
    fs.writeFileSync(path.join(avdHomeDir, "Tablet.avd", "config.ini"), "hw.lcd.width=huge\n");
    assert.throws(() => readAvd(avdHomeDir, "Tablet"), /hw\.lcd\.width=huge is not a screen dimension/);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test("discovery file: the emulator's keys in its order, one line per value, in $XDG_RUNTIME_DIR/avd/running", () => {
  const text = renderDiscovery({ consolePort: 5600, adbPort: 5601, avdName: "P", avdDir: "/a\nport.serial=1", grpcPort: 8600, grpcToken: "t0k" });
  const keys = parseDiscovery(text);
  assert.deepEqual([...keys.keys()], ["port.serial", "emulator.build", "emulator.version", "port.adb", "avd.name", "avd.id", "avd.dir", "cmdline", "grpc.port", "grpc.token"]);
  assert.equal(keys.get("port.serial"), "5600", "a newline in a value must not forge a key");
  assert.equal(keys.get("grpc.token"), "t0k");
  assert.equal(discoveryDirectory({ XDG_RUNTIME_DIR: "/run/user/7" }), "/run/user/7/avd/running");
  assert.equal(keys.has("port.console"), false, "console on adb - 1: port.serial says it all");
});

test("discovery file of -ports C,A with C != A-1: port.serial is adb's number (A-1), port.console is C", () => {
  const keys = parseDiscovery(renderDiscovery({ consolePort: 45725, adbPort: 5555, avdName: "P", avdDir: "/a" }));
  assert.equal(keys.get("port.serial"), "5554");
  assert.equal(keys.get("port.adb"), "5555");
  assert.equal(keys.get("port.console"), "45725");
});
