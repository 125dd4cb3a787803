import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { modulePolicy, type Action } from "../src/index.ts";
import { context, observation, rejectsWithPolicyError as rejectsWith, useTempDir } from "./helpers.ts";

const tmp = useTempDir("policy-module-");
const file = tmp.file;

test("a .ts file exporting createPolicy(options): options passed, actions validated, version = content hash", async () => {
  const path = await file(
    "corner.ts",
    `
    interface Obs { stepIndex: number }
    export function createPolicy(options: { x: number }) {
      let resets = 0;
      return {
        name: "corner",
        needsPixels: true,
        async reset() { resets++; },
        async act(o: Obs) {
          return o.stepIndex % 2 === 0
            ? { actionType: "TOUCH", touchPosition: [options.x, resets / 10] }
            : { actionType: "LIFT" };
        },
      };
    }
    `,
  );
  const p = await modulePolicy(path, { x: 0.25 });
  assert.equal(p.name, "corner");
  assert.equal(p.needsPixels, true);
  assert.match(p.version, /^[0-9a-f]{12}$/);
  await p.reset(context(1));
  assert.deepEqual(await p.act(observation(0)), { actionType: "TOUCH", touchPosition: [0.25, 0.1] });
  assert.deepEqual(await p.act(observation(1)), { actionType: "LIFT", touchPosition: [0, 0] });
  await p.close(); // absent close() is fine
});

test("a default-exported policy object in a .mjs file; name defaults to the file", async () => {
  const path = await file("center.mjs", `export default { act: () => ({ actionType: "TOUCH", touchPosition: [0.5, 0.5] }) };`);
  const p = await modulePolicy(path);
  assert.equal(p.name, "module:center.mjs");
  assert.equal(p.needsPixels, false);
  assert.deepEqual(await p.act(observation()), { actionType: "TOUCH", touchPosition: [0.5, 0.5] });
});

test("an edited file reloads with a new version", async () => {
  const path = join(tmp.dir, "edit.mjs");
  await writeFile(path, `export default { act: () => ({ actionType: "LIFT" }) };`);
  const a = await modulePolicy(path);
  await writeFile(path, `export default { act: () => ({ actionType: "REPEAT" }) };`);
  const b = await modulePolicy(path);
  assert.notEqual(a.version, b.version);
  assert.equal(((await b.act(observation())) as Action).actionType, "REPEAT");
});

test("shape errors are clear", async () => {
  await rejectsWith(modulePolicy(await file("none.mjs", `export const x = 1;`)), "bad_module", /exports x; export `createPolicy/);
  await rejectsWith(modulePolicy(await file("fn.mjs", `export default function () {}`)), "bad_module", /default export that is a function; name it `createPolicy`/);
  await rejectsWith(modulePolicy(await file("noact.mjs", `export default { reset() {} };`)), "bad_module", /has no act\(\) method/);
  await rejectsWith(modulePolicy(await file("pix.mjs", `export default { act() {}, needsPixels: "yes" };`)), "bad_module", /needsPixels must be a boolean/);
  await rejectsWith(modulePolicy(await file("throws.mjs", `export function createPolicy() { throw new Error("no model"); }`)), "bad_module", /createPolicy\(\) in .*throws\.mjs threw: no model/);
  await rejectsWith(modulePolicy(await file("syntax.mjs", `export default {`)), "bad_module", /importing .*syntax\.mjs failed/);
  await rejectsWith(modulePolicy(join(tmp.dir, "missing.mjs")), "bad_module", /cannot read .*missing\.mjs/);
});

test("an invalid action or a throw from act() is a bad_action error", async () => {
  const bad = await modulePolicy(await file("badact.mjs", `export default { act: () => ({ actionType: "TOUCH", touchPosition: [2, 0] }) };`));
  await rejectsWith(bad.act(observation()), "bad_action", /badact\.mjs: act\(\) returned an invalid action: touchPosition/);
  const thrower = await modulePolicy(await file("throwact.mjs", `export default { act() { throw new Error("boom"); } };`));
  await rejectsWith(thrower.act(observation()), "bad_action", /act\(\) threw: boom/);
});
