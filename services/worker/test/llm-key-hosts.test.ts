/**
 * The worker's LLM API key goes only to its key hosts (FARM_LLM_KEY_HOSTS: exact names or addresses, never `*`),
 * over https unless loopback. A job naming another endpoint is rejected before any request: the stand-in for that
 * host never sees an Authorization header (nor any request).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { startLlmStandIn } from "@farm/local-services";
import { failureCodeOf, policyRefSchema } from "@farm/queue";
import { createFarmMetrics } from "@farm/metrics";
import { keyHostProblem, parseKeyHosts } from "@farm/policy";
import { UnrecoverableError } from "bullmq";
import { resolveWorkerConfig } from "../src/config.ts";
import { policyForJob } from "../src/policy-resolver.ts";
import { hostPolicyTransport } from "../src/policy-transport.ts";

const KEY = "sk-worker-key-hosts-77";

test("a job naming a host that is not a key host is rejected and never sent the key; a key host gets it", async (t) => {
  const llm = await startLlmStandIn({ script: [{ json: { action_type: "navigate_back" } }] });
  t.after(() => llm.close());
  const port = new URL(llm.endpoint).port;
  // Only `localhost` is a key host: the same server named by its address is another endpoint.
  const config = resolveWorkerConfig({}, { FARM_LLM_API_KEY: KEY, FARM_LLM_KEY_HOSTS: "localhost" });
  assert.deepEqual(config.llmKeyHosts, ["localhost"]);
  const transport = hostPolicyTransport(config, createFarmMetrics({ service: "t", collectDefault: false }));
  t.after(() => transport.batcher.close());
  const other = policyRefSchema.parse({ spec: `llm:m@http://127.0.0.1:${port}/v1` });
  await assert.rejects(policyForJob(other, undefined, undefined, transport), (e: unknown) => {
    assert.ok(e instanceof UnrecoverableError, String(e));
    assert.equal(failureCodeOf(e.message), "POLICY_INVALID", e.message);
    assert.match(e.message, /sent only to the hosts in FARM_LLM_KEY_HOSTS \(localhost\); "127\.0\.0\.1" is not one of them/);
    assert.doesNotMatch(e.message, new RegExp(KEY));
    return true;
  });
  assert.equal(llm.requests.length, 0, "the non-key host saw a request");
  assert.ok(llm.requests.every((r) => r.authorization === undefined));

  const listed = await policyForJob(policyRefSchema.parse({ spec: `llm:m@http://localhost:${port}/v1` }), undefined, undefined, transport);
  t.after(() => listed.close());
  await listed.reset({ seed: 1, episodeIndex: 0, screen: { width: 1080, height: 1920 }, goal: "g" });
  await listed.act({ timedeltaUs: 0, orientation: 0, extras: {}, stepIndex: 0, screen: { width: 1080, height: 1920 }, goal: "g", elements: [] });
  assert.equal(llm.requests.at(-1)?.authorization, `Bearer ${KEY}`);

  // Without a key there is nothing to keep home: the same job runs (no header).
  const keyless = hostPolicyTransport(resolveWorkerConfig({}, { FARM_LLM_KEY_HOSTS: "localhost" }), createFarmMetrics({ service: "t", collectDefault: false }));
  t.after(() => keyless.batcher.close());
  const p = await policyForJob(other, undefined, undefined, keyless);
  await p.reset({ seed: 1, episodeIndex: 0, screen: { width: 1080, height: 1920 }, goal: "g" });
  await p.act({ timedeltaUs: 0, orientation: 0, extras: {}, stepIndex: 0, screen: { width: 1080, height: 1920 }, goal: "g", elements: [] });
  await p.close();
  assert.equal(llm.requests.at(-1)?.authorization, undefined);
});

test("key hosts: never `*`, no wildcards or ranges; https unless loopback; the default is loopback", () => {
  for (const bad of ["*", "*.example.com", "10.0.0.0/8", "a b"]) {
    assert.throws(() => parseKeyHosts([bad]), RangeError, bad);
    assert.throws(() => resolveWorkerConfig({}, { FARM_LLM_KEY_HOSTS: bad }), /llmKeyHosts \(FARM_LLM_KEY_HOSTS\)/);
  }
  assert.deepEqual(resolveWorkerConfig({}, {}).llmKeyHosts, ["localhost", "127.0.0.1", "::1"]);
  assert.equal(keyHostProblem("http://127.0.0.1:8000/v1"), undefined);
  assert.equal(keyHostProblem("http://[::1]:8000/v1"), undefined);
  assert.equal(keyHostProblem("https://api.example.com/v1", ["api.example.com"]), undefined);
  assert.match(keyHostProblem("http://api.example.com/v1", ["api.example.com"]) ?? "", /only over https/);
  assert.match(keyHostProblem("https://evil.example/v1", ["api.example.com"]) ?? "", /"evil\.example" is not one of them/);
  assert.match(keyHostProblem("https://api.example.com.evil.example/v1", ["api.example.com"]) ?? "", /not one of them/);
});
