import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { buildSimApk, parseSimApk, prebuiltApkFiles, SimApkError } from "../src/android/index.ts";
import { newDevice, sh, APK_DIR } from "./android-helpers.ts";

test("buildSimApk / parseSimApk round trip, short activity names expanded", () => {
  const bytes = buildSimApk({ packageName: "com.example.x", versionCode: 3, activities: [".Main", "com.example.x.Other"], app: "sim-notes" });
  assert.equal(new TextDecoder().decode(bytes.subarray(0, 9)), "SIMAPK 1\n");
  assert.deepEqual(parseSimApk(bytes), { packageName: "com.example.x", versionCode: 3, activities: ["com.example.x.Main", "com.example.x.Other"], app: "sim-notes", label: "com.example.x" });
  assert.throws(() => parseSimApk(new TextEncoder().encode("PK\x03\x04garbage")), SimApkError);
  assert.throws(() => parseSimApk(new TextEncoder().encode("SIMAPK 1\n{not json")), SimApkError);
  assert.throws(() => buildSimApk({ packageName: "nodots", versionCode: 1, activities: ["A"], app: "x" }), SimApkError);
});

test("committed tasks/apks files equal what the builder produces", () => {
  for (const { file, bytes } of prebuiltApkFiles()) {
    const committed = new Uint8Array(readFileSync(new URL(file, APK_DIR)));
    assert.deepEqual(committed, bytes, `${file} is stale: run node --import tsx libs/simulator/src/apk/write-prebuilt.ts`);
  }
});

test("install from pushed bytes, reinstall, uninstall; garbage fails", async () => {
  const d = newDevice();
  const apk = readFileSync(new URL("catch_the_ball.apk", APK_DIR));
  d.fs.write("/data/local/tmp/catch.apk", apk, 0o100644, 1_700_000_000);
  assert.equal((await sh(d, "pm install -r -t -g /data/local/tmp/catch.apk")).out, "Success\n");
  assert.match((await sh(d, "pm list packages")).out, /^package:com\.example\.catchtheball$/m);
  assert.deepEqual(d.fs.read("/data/app/com.example.catchtheball-1/base.apk"), new Uint8Array(apk));
  assert.equal((await sh(d, "am start -W -n com.example.catchtheball/.MainActivity")).code, 0);
  assert.equal((await sh(d, "pm install /data/local/tmp/catch.apk")).out, "Success\n");
  assert.equal(d.system.activities.foregroundProcess(), undefined, "reinstall kills the running app");
  d.fs.write("/data/local/tmp/junk.apk", new TextEncoder().encode("this is not an apk"), 0o644, 0);
  const junk = await sh(d, "pm install -r -t -g /data/local/tmp/junk.apk");
  assert.equal(junk.out, "Failure [INSTALL_FAILED_INVALID_APK]\n");
  assert.equal(junk.code, 1);
  assert.notEqual((await sh(d, "pm install /data/local/tmp/missing.apk")).code, 0);
  assert.equal((await sh(d, "pm uninstall com.example.catchtheball")).out, "Success\n");
  assert.equal((await sh(d, "pm uninstall com.example.catchtheball")).out, "Failure [DELETE_FAILED_INTERNAL_ERROR]\n");
  assert.doesNotMatch((await sh(d, "pm list packages")).out, /catchtheball/);
  d.close();
});

test("streamed install: cmd package install -S <size> reads the APK from stdin", async () => {
  const d = newDevice();
  const apk = readFileSync(new URL("classic_2048.apk", APK_DIR));
  const r = await sh(d, `cmd package 'install' '-S' ${apk.length} -r -t -g`, { stdin: apk });
  assert.equal(r.out, "Success\n");
  assert.equal(r.code, 0);
  assert.match((await sh(d, "pm list packages -3")).out, /com\.tpcstld\.twozerogame/);
  const short = await sh(d, `cmd package install -S ${apk.length + 10}`, { stdin: apk });
  assert.match(short.out, /^Failure \[INSTALL_FAILED_INVALID_APK/);
  d.close();
});
