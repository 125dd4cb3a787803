/** `launch` settings: off by default, flags over env, clear errors naming the setting. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { resolveWorkerConfig } from "../src/index.ts";

test("launch is off by default and read from flags over FARM_LAUNCH* env", () => {
  assert.equal(resolveWorkerConfig({}, {}).launch, undefined);
  const env = { FARM_LAUNCH: "3", FARM_LAUNCH_AVD: "Pixel_Sim", FARM_EMULATOR: "/opt/sdk/emulator/emulator", FARM_LAUNCH_SNAPSHOT: "clean" };
  const l = resolveWorkerConfig({}, env).launch!;
  assert.deepEqual([l.count, l.avd, l.emulator, l.snapshot, l.bootTimeoutMs], [3, "Pixel_Sim", "/opt/sdk/emulator/emulator", "clean", 120_000]);
  assert.equal(resolveWorkerConfig({ launch: { count: 1, avd: "Other" } }, env).launch!.avd, "Other");
  assert.equal(resolveWorkerConfig({ launch: { count: 0 } }, env).launch, undefined);
});

test("bad launch settings fail at start-up naming the setting", () => {
  assert.throws(() => resolveWorkerConfig({ launch: { count: 2 } }, {}), /avd \(FARM_LAUNCH_AVD\) is needed to launch emulators: --avd NAME/);
  assert.throws(() => resolveWorkerConfig({ launch: { count: 99, avd: "a" } }, {}), /FARM_LAUNCH.*0\.\.64/);
  assert.throws(() => resolveWorkerConfig({ launch: { count: 1, avd: "a;rm -rf /" } }, {}), /avd \(FARM_LAUNCH_AVD\) .a;rm -rf \/. must be/);
  assert.throws(() => resolveWorkerConfig({ launch: { count: 1, avd: "a", snapshot: "../x" } }, {}), /snapshot \(FARM_LAUNCH_SNAPSHOT\) ...\/x. must be/);
});
