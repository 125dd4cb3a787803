/**
 * Policies report their versions (issue 38): the HTTP policy from the answer's `policy_version` (else the response's
 * X-Policy-Version), also per item of a batch; the llm policy from X-Policy-Version (else the completion's `model`);
 * a module policy by a decision's `version`. Bad versions are refused with the field named.
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { after, before, test } from "node:test";
import { startLlmStandIn, type LlmStandIn } from "@farm/local-services";
import { listenOnFreePort } from "@farm/net-ports";
import { httpPolicy, llmPolicy, modulePolicy, PolicyBatcher, readAnswer, type PolicyDecision, type UiElement } from "../src/index.ts";
import { context, observation, rejectsWithPolicyError, useTempDir } from "./helpers.ts";

const tmp = useTempDir("policy-versions-");

/** What the stand-in policy server answers next: body and headers. */
let reply: { body: unknown; headers?: Record<string, string> } = { body: {} };
let server: Server;
let base: string;

before(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json", ...reply.headers });
      res.end(JSON.stringify(reply.body));
    });
  });
  base = `http://127.0.0.1:${await listenOnFreePort(server, "127.0.0.1")}`;
});
after(async () => {
  await new Promise((r) => server.close(r));
});

const TOUCH = { actionType: "TOUCH", touchPosition: [0.25, 0.75] };

test("http: the body's policy_version wins over the header; a whole number is kept as its text; none: a bare action", async () => {
  const p = httpPolicy(`${base}/act`);
  await p.reset(context(1));
  reply = { body: { ...TOUCH, policy_version: "ckpt-9" }, headers: { "x-policy-version": "7" } };
  const a = readAnswer(await p.act(observation(0)));
  assert.deepEqual([a.kind, a.version], ["touch", "ckpt-9"]);
  reply = { body: TOUCH, headers: { "x-policy-version": "8" } };
  assert.equal(readAnswer(await p.act(observation(1))).version, "8");
  reply = { body: { action: { action_type: "wait" }, given: "wait", policy_version: 12 } };
  const ui = readAnswer(await p.act(observation(2)));
  assert.deepEqual([ui.kind, ui.version, ui.given], ["ui", "12", "wait"]);
  reply = { body: { action: TOUCH, version: "own" }, headers: { "x-policy-version": "9" } };
  assert.equal(readAnswer(await p.act(observation(3))).version, "own", "a decision's own version beats the header");
  reply = { body: TOUCH };
  assert.deepEqual(await p.act(observation(4)), { actionType: "TOUCH", touchPosition: [0.25, 0.75] });
  reply = { body: { ...TOUCH, policy_version: { major: 1 } } };
  await rejectsWithPolicyError(p.act(observation(5)), "bad_response", /policy_version must be a string of 1-128 printable characters or a whole number/);
  reply = { body: { ...TOUCH, policy_version: "x".repeat(129) } };
  await rejectsWithPolicyError(p.act(observation(6)), "bad_response", /policy_version must be/);
  await p.close();
});

test("http-batch: each result's policy_version, else the batch response's header", async () => {
  const batcher = new PolicyBatcher({ windowMs: 30 });
  const [a, b] = [batcher.policy(`${base}/batch`), batcher.policy(`${base}/batch`)];
  await a.reset(context(1));
  await b.reset(context(2));
  reply = { body: { results: [{ id: "d0", action: TOUCH, policy_version: "3" }, { id: "d1", action: TOUCH }] }, headers: { "x-policy-version": "2" } };
  const [ra, rb] = await Promise.all([a.act(observation(0)), b.act(observation(0))]);
  assert.deepEqual([readAnswer(ra).version, readAnswer(rb).version].sort(), ["2", "3"]);
  await a.close();
  await b.close();
  batcher.close();
});

test("module: a decision's version travels; a bad one fails the step naming the field", async () => {
  const path = await tmp.file("versioned.mjs", `let n = 0; export default { act: () => ({ action: { actionType: "LIFT" }, version: n++ < 1 ? "v1" : 2 }) };`);
  const p = await modulePolicy(path);
  assert.equal(readAnswer(await p.act(observation(0))).version, "v1");
  assert.equal(readAnswer(await p.act(observation(1))).version, "2");
  const bad = await modulePolicy(await tmp.file("bad.mjs", `export default { act: () => ({ action: { actionType: "LIFT" }, version: "" }) };`));
  await rejectsWithPolicyError(bad.act(observation(0)), "bad_action", /version must be a string of 1-128/);
});

const ELEMENTS: UiElement[] = [
  { index: 0, class_name: "android.widget.Button", text: "OK", content_description: "", hint_text: "", resource_id: "a:id/ok", package_name: "a", bounds: [0, 0, 100, 100], is_clickable: true, is_long_clickable: false, is_editable: false, is_scrollable: false, is_checkable: false, is_checked: false, is_focused: false, is_enabled: true, is_selected: false },
];

test("llm: X-Policy-Version wins; without it the completion's model field is the version", async () => {
  let header: string | undefined = "41";
  let model = "qwen-ckpt-100";
  const llm: LlmStandIn = await startLlmStandIn({ model: "qwen", answerModel: () => model, policyVersionHeader: () => header, solver: [] });
  try {
    const p = llmPolicy({ endpoint: llm.endpoint, model: "qwen", screenshot: false });
    await p.reset({ ...context(1), goal: "tap OK" });
    const obs = { ...observation(0), goal: "tap OK", elements: ELEMENTS };
    const d1: PolicyDecision = await p.act(obs);
    assert.equal(d1.version, "41");
    header = undefined;
    model = "qwen-ckpt-200";
    const d2 = await p.act({ ...obs, stepIndex: 1 });
    assert.equal(d2.version, "qwen-ckpt-200");
    assert.equal(readAnswer(d2).version, "qwen-ckpt-200");
    await p.close();
  } finally {
    await llm.close();
  }
});
