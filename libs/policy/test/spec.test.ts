import assert from "node:assert/strict";
import { test } from "node:test";
import { policyFromSpec, PolicyError, type Action } from "../src/index.ts";
import { parsePolicySpec } from "@farm/policy/testing";
import { observation, useTempDir } from "./helpers.ts";

const tmp = useTempDir("policy-spec-");

test("parsePolicySpec accepts the CLI forms", () => {
  assert.deepEqual(parsePolicySpec("random"), { kind: "random" });
  assert.deepEqual(parsePolicySpec("random:42"), { kind: "random", seed: 42 });
  assert.deepEqual(parsePolicySpec("scripted:a/b.jsonl"), { kind: "scripted", file: "a/b.jsonl" });
  assert.deepEqual(parsePolicySpec("module:./p.ts"), { kind: "module", file: "./p.ts" });
  assert.deepEqual(parsePolicySpec("http:http://h:8000/act"), { kind: "http", url: "http://h:8000/act" });
  assert.deepEqual(parsePolicySpec("https://h/act"), { kind: "http", url: "https://h/act" });
});

test("parsePolicySpec rejects bad forms with the list of good ones", () => {
  for (const bad of ["", "greedy", "random:x", "scripted:", "module:", "http:localhost:8000"]) {
    assert.throws(() => parsePolicySpec(bad), (e: unknown) => e instanceof PolicyError && e.code === "bad_spec" && /use one of random/.test(e.message), bad);
  }
});

test("policyFromSpec builds each kind, resolving files against baseDir", async () => {
  await tmp.file("s.jsonl", `{"actionType":"LIFT"}\n`);
  await tmp.file("m.mjs", `export default { act: () => ({ actionType: "REPEAT" }) };`);
  const scripted = await policyFromSpec("scripted:s.jsonl", { baseDir: tmp.dir });
  assert.equal(((await scripted.act(observation())) as Action).actionType, "LIFT");
  const mod = await policyFromSpec("module:m.mjs", { baseDir: tmp.dir });
  assert.equal(((await mod.act(observation())) as Action).actionType, "REPEAT");
  const rnd = await policyFromSpec("random:3");
  assert.equal(rnd.name, "random");
  const http = await policyFromSpec("http:http://127.0.0.1:1/act", { http: { timeoutMs: 50 } });
  assert.equal(http.name, "http:127.0.0.1:1/act");
  assert.equal(http.version, "unknown");
});
