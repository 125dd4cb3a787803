/**
 * `llm:<model>@<endpoint>` jobs: the settings ride in the job (never the key: the schema has no field for it), the
 * worker builds the policy with its own FARM_LLM_API_KEY and allow-list, and messages carry no URL secrets.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { startLlmStandIn } from "@farm/local-services";
import { failureCodeOf, policyRefSchema } from "@farm/queue";
import { UnrecoverableError } from "bullmq";
import { createFarmMetrics } from "@farm/metrics";
import { resolveWorkerConfig } from "../src/config.ts";
import { policyForJob, shownSpec } from "../src/policy-resolver.ts";
import { hostPolicyTransport } from "../src/policy-transport.ts";

const KEY = "sk-worker-5e2a9c1b";

test("a job's llm policy is built from its spec and settings, with the worker's own API key", async (t) => {
  const llm = await startLlmStandIn({ apiKey: KEY, script: [{ json: { action_type: "navigate_back" } }] });
  t.after(() => llm.close());
  const config = resolveWorkerConfig({}, { FARM_LLM_API_KEY: KEY });
  const transport = hostPolicyTransport(config, createFarmMetrics({ service: "t", collectDefault: false }));
  const ref = policyRefSchema.parse({ spec: `llm:Qwen/Qwen2.5-VL-7B-Instruct@${llm.endpoint}`, llm: { maxTokens: 77, temperature: 0.3, screenshot: false, promptTemplate: "Goal {{goal}}\n{{elements}}" } });
  const policy = await policyForJob(ref, undefined, undefined, transport);
  assert.equal(policy.needsPixels, false);
  assert.equal(policy.needsElements, true);
  await policy.reset({ seed: 1, episodeIndex: 0, screen: { width: 1080, height: 1920 }, goal: "go back" });
  const d = await policy.act({ timedeltaUs: 0, orientation: 0, extras: {}, stepIndex: 0, screen: { width: 1080, height: 1920 }, goal: "go back", elements: [] });
  assert.deepEqual((d as { action?: unknown }).action, { action_type: "navigate_back" });
  const r = llm.requests.at(-1)!;
  assert.equal(r.authorization, `Bearer ${KEY}`);
  assert.equal(r.body.model, "Qwen/Qwen2.5-VL-7B-Instruct");
  assert.equal(r.body.max_tokens, 77);
  assert.equal(r.body.temperature, 0.3);
  assert.match(r.promptText, /^Goal go back\n\(no elements/);
  await policy.close();
  await transport.batcher.close();
  assert.throws(() => resolveWorkerConfig({}, { FARM_LLM_API_KEY: "sk has spaces" }), (e: unknown) => {
    assert.match(String(e), /llmApiKey \(FARM_LLM_API_KEY\) must be 1-4096 printable characters/);
    assert.doesNotMatch(String(e), /has spaces/);
    return true;
  });
});

test("job schema: no key, no credentials in the endpoint, bounded settings; the allow-list applies", async () => {
  assert.ok(!policyRefSchema.safeParse({ spec: "llm:m@http://127.0.0.1:8000/v1", llm: { apiKey: "sk-x" } }).success, "a job cannot carry an API key");
  assert.ok(!policyRefSchema.safeParse({ spec: "llm:m@http://u:pw@127.0.0.1:8000/v1" }).success);
  assert.ok(!policyRefSchema.safeParse({ spec: "llm:m@http://127.0.0.1/v1", llm: { temperature: 5 } }).success);
  assert.ok(!policyRefSchema.safeParse({ spec: "llm:bad model@http://127.0.0.1/v1" }).success);
  assert.ok(policyRefSchema.safeParse({ spec: "llm:llama3.2-vision:11b@http://127.0.0.1:11434/v1", llm: { concurrency: 4 } }).success);
  for (const spec of ["llm:m@http://10.0.0.1:8000/v1", "llm:m@http://169.254.169.254/v1"]) {
    await assert.rejects(policyForJob({ spec }, undefined, ["*.models.example"]), (e: unknown) => {
      assert.ok(e instanceof UnrecoverableError, String(e));
      assert.equal(failureCodeOf(e.message), "POLICY_INVALID", e.message);
      return true;
    });
  }
  await (await policyForJob({ spec: "llm:m@http://10.0.0.1:8000/v1" }, undefined, ["10.0.0.0/8"])).close();
  assert.equal(shownSpec("llm:m@http://h:8000/v1?key=s3cr3t"), "llm:m@http://h:8000/v1?key=***");
});
