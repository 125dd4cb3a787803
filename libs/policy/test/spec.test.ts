import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { parsePolicySpec, policyFromSpec, PolicyError } from "../src/index.ts";
import { observation } from "./helpers.ts";

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
  const dir = await mkdtemp(join(tmpdir(), "policy-spec-"));
  try {
    await writeFile(join(dir, "s.jsonl"), `{"actionType":"LIFT"}\n`);
    await writeFile(join(dir, "m.mjs"), `export default { act: () => ({ actionType: "REPEAT" }) };`);
    const scripted = await policyFromSpec("scripted:s.jsonl", { baseDir: dir });
    assert.equal((await scripted.act(observation())).actionType, "LIFT");
    const mod = await policyFromSpec("module:m.mjs", { baseDir: dir });
    assert.equal((await mod.act(observation())).actionType, "REPEAT");
    const rnd = await policyFromSpec("random:3");
    assert.equal(rnd.name, "random");
    const http = await policyFromSpec("http:http://127.0.0.1:1/act", { http: { timeoutMs: 50 } });
    assert.equal(http.name, "http:127.0.0.1:1/act");
    assert.equal(http.version, "unknown");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
