/** The llm policy against our OpenAI-compatible stand-in server: prompts, tolerant answers, retries, limits, the key. */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { createLogger } from "@farm/log";
import { startLlmStandIn, type LlmStandIn, type StandInEntry } from "@farm/local-services";
import { llmPolicy, loadPromptTemplate, policyFromSpec, PolicyError, type LlmPolicyOptions, type Observation, type PolicyDecision, type UiElement } from "../src/index.ts";
import { extractAction, parsePolicySpec } from "@farm/policy/testing";
import { context, observation, rejectsWithPolicyError } from "./helpers.ts";

const KEY = "sk-test-3f9a71c2e5d04b8a";

function element(index: number, text: string, extra: Partial<UiElement> = {}): UiElement {
  return {
    index, class_name: "android.widget.Button", text, content_description: "", hint_text: "", resource_id: `app:id/e${index}`, package_name: "com.farm.simapps.todo",
    bounds: [0, index * 100, 1080, index * 100 + 90], is_clickable: true, is_long_clickable: false, is_editable: false, is_scrollable: false,
    is_checkable: false, is_checked: false, is_focused: false, is_enabled: true, is_selected: false, ...extra,
  };
}

const ELEMENTS = [element(0, "Todo", { is_clickable: false }), element(1, "", { class_name: "android.widget.EditText", hint_text: "Search notes", is_editable: true }), element(2, "NEW NOTE")];

function screenObs(stepIndex = 0, extra: Partial<Observation> = {}): Observation {
  const width = 1080;
  const height = 1920;
  const rgb = new Uint8Array(width * height * 3).fill(200);
  return { ...observation(stepIndex), goal: "Create a note titled milk", elements: ELEMENTS, pixels: { width, height, rgb }, ...extra };
}

let llm: LlmStandIn;
before(async () => {
  llm = await startLlmStandIn({ apiKey: KEY, model: "stand-in" });
});
after(async () => {
  await llm.close();
});

function policy(o: Partial<LlmPolicyOptions> = {}) {
  return llmPolicy({ endpoint: llm.endpoint, model: "stand-in", apiKey: KEY, maxBackoffMs: 100, ...o });
}

async function step(script: StandInEntry[], o: Partial<LlmPolicyOptions> = {}, obs = screenObs()): Promise<{ d: PolicyDecision; sent: number }> {
  llm.setScript(script);
  const before = llm.requests.length;
  const p = policy(o);
  try {
    await p.reset({ ...context(1), goal: "Create a note titled milk" });
    const d = await p.act(obs);
    return { d, sent: llm.requests.length - before };
  } finally {
    await p.close();
  }
}

test("a good answer becomes the action; the request holds model, goal, elements, history, the image and the bearer token", async () => {
  llm.setScript([{ json: { action_type: "click", index: 2 }, usage: { prompt_tokens: 1234, completion_tokens: 17 } }, { json: { action_type: "wait" } }]);
  const p = policy({ maxTokens: 99, temperature: 0.5, screenshotMaxSide: 256 });
  await p.reset({ ...context(1), goal: "Create a note titled milk" });
  const first = llm.requests.length;
  const d = await p.act(screenObs(0));
  assert.deepEqual(d.action, { action_type: "click", index: 2 });
  assert.equal(d.given, '{"action_type":"click","index":2}');
  assert.equal(d.usage?.promptTokens, 1234);
  assert.equal(d.usage?.completionTokens, 17);
  assert.equal(d.usage?.attempts, 1);
  assert.ok((d.usage?.latencyMs ?? -1) >= 0);
  const r = llm.requests[first]!;
  assert.equal(r.authorization, `Bearer ${KEY}`);
  assert.equal(r.body.model, "stand-in");
  assert.equal(r.body.max_tokens, 99);
  assert.equal(r.body.temperature, 0.5);
  assert.match(r.promptText, /Goal: Create a note titled milk/);
  assert.match(r.promptText, /^2: \{"class":"Button","text":"NEW NOTE"/m);
  assert.match(r.promptText, /^1: .*"hint_text":"Search notes".*"editable":true/m);
  assert.match(r.promptText, /\(none yet\)/);
  assert.equal(r.images.length, 1);
  assert.match(r.images[0]!, /^data:image\/png;base64,/);
  const png = Buffer.from(r.images[0]!.split(",")[1]!, "base64");
  assert.equal(png.readUInt32BE(16), 144, "width downscaled so the longer side is 256");
  assert.equal(png.readUInt32BE(20), 256);
  // Step 2: the previous answer and its outcome are in the history.
  await p.act(screenObs(1, { previous: { given: d.given!, resolved: { op: "tap", x: 540, y: 245, element: 2 } } }));
  const r2 = llm.requests.at(-1)!;
  assert.match(r2.promptText, /Step 1: \{"action_type":"click","index":2\} → done: tap element 2 at \(540, 245\)/);
  await p.close();
});

test("fenced answers and AndroidWorld's Reason/Action prose are read", async () => {
  const fenced = await step([{ fenced: { action_type: "input_text", text: "milk", index: 1 } }]);
  assert.deepEqual(fenced.d.action, { action_type: "input_text", text: "milk", index: 1 });
  const prose = await step([{ prose: { action_type: "scroll", direction: "down" } }]);
  assert.deepEqual(prose.d.action, { action_type: "scroll", direction: "down" });
  const noisy = await step([{ text: 'I think {so} we go. Action: {"action_type": "status", "goal_status": "complete"} done {"x": 1}' }]);
  assert.deepEqual(noisy.d.action, { action_type: "status", goal_status: "complete" });
});

test("text-only: no image part and the policy does not ask for pixels", async () => {
  const p = policy({ screenshot: false });
  assert.equal(p.needsPixels, false);
  assert.equal(p.needsElements, true);
  await p.close();
  const { sent } = await step([{ json: { action_type: "wait" } }], { screenshot: false });
  assert.equal(sent, 1);
  assert.equal(llm.requests.at(-1)!.images.length, 0);
  assert.equal(typeof (llm.requests.at(-1)!.body.messages as { content: unknown }[])[0]!.content, "string");
});

test("nonsense is asked again with a correction, then recorded as an invalid step with the text as given", async () => {
  const { d, sent } = await step([{ text: "bananas" }, { text: "still {not json" }, { json: { action_type: "click", index: 9 } }]);
  assert.equal(sent, 3, "one answer and two retries (the default)");
  assert.equal(d.action, undefined);
  assert.match(d.invalid!, /index 9 is not on the screen/);
  assert.equal(d.given, '{"action_type":"click","index":9}');
  assert.equal(d.usage?.attempts, 3);
  const second = llm.requests.at(-2)!.body.messages as { role: string; content: unknown }[];
  assert.deepEqual(second.map((m) => m.role), ["user", "assistant", "user"]);
  assert.equal(second[1]!.content, "bananas");
  assert.match(String(second[2]!.content), /could not be used: the answer holds no JSON object/);
  // A valid answer on a retry is taken.
  const later = await step([{ text: "hmm" }, { json: { action_type: "navigate_back" } }]);
  assert.deepEqual(later.d.action, { action_type: "navigate_back" });
  assert.equal(later.d.usage?.attempts, 2);
});

test("a slow answer is a timeout (retryable); with a retry left, the next answer is taken", async () => {
  llm.setScript([{ slowMs: 5000 }]);
  const p = policy({ timeoutMs: 300, httpRetries: 0 });
  await p.reset(context(1));
  await rejectsWithPolicyError(p.act(screenObs()), "timeout", /no answer within 300 ms/, true);
  await p.close();
  const { d, sent } = await step([{ slowMs: 5000 }, { json: { action_type: "wait" } }], { timeoutMs: 300, httpRetries: 1 });
  assert.deepEqual(d.action, { action_type: "wait" });
  assert.equal(sent, 2);
  assert.equal(d.usage?.attempts, 2);
});

test("429 is retried after the server's Retry-After", async () => {
  const t0 = Date.now();
  const { d, sent } = await step([{ status: 429, retryAfterS: 1 }, { json: { action_type: "wait" } }], { maxBackoffMs: 5000 });
  assert.ok(Date.now() - t0 >= 950, "waited for Retry-After: 1");
  assert.deepEqual(d.action, { action_type: "wait" });
  assert.equal(sent, 2);
  // Bounded: a Retry-After of an hour is cut to maxBackoffMs.
  const bounded = await step([{ status: 429, retryAfterS: 3600 }, { json: { action_type: "wait" } }], { maxBackoffMs: 50 });
  assert.deepEqual(bounded.d.action, { action_type: "wait" });
});

test("500 is retried, then fails the step as a retryable PolicyError; 400 fails at once", async () => {
  llm.setScript([{ status: 500 }, { status: 500 }, { status: 500 }, { status: 500 }]);
  const before = llm.requests.length;
  const p = policy({ httpRetries: 2 });
  await p.reset(context(1));
  await rejectsWithPolicyError(p.act(screenObs()), "http_status", /HTTP 500/, true);
  assert.equal(llm.requests.length - before, 3);
  llm.setScript([{ status: 400, body: "internal secret page" }]);
  const b2 = llm.requests.length;
  await rejectsWithPolicyError(p.act(screenObs()), "http_status", /HTTP 400 \(a body of 20 bytes, not shown/, false);
  assert.equal(llm.requests.length - b2, 1);
  await p.close();
});

test("the API key never appears in errors or log lines", async () => {
  const lines: string[] = [];
  const logger = createLogger({ service: "t", level: "debug", destination: { write: (l: string) => void lines.push(l) } });
  const errors: string[] = [];
  const cases: { script: StandInEntry[]; o?: Partial<LlmPolicyOptions> }[] = [
    { script: [{ status: 500 }, { status: 500 }] },
    { script: [{ text: "nonsense" }, { text: "nonsense" }, { text: "nonsense" }] },
    { script: [{ slowMs: 3000 }], o: { timeoutMs: 200 } },
    { script: [{ json: { action_type: "wait" } }], o: { apiKey: `${KEY}-wrong` } },
  ];
  for (const c of cases) {
    llm.setScript(c.script);
    const p = policy({ httpRetries: 1, logger, ...c.o });
    await p.reset(context(1));
    try {
      const d = await p.act(screenObs());
      errors.push(JSON.stringify(d));
    } catch (e) {
      assert.ok(e instanceof PolicyError);
      errors.push(e.message, String(e.stack), JSON.stringify(e));
    }
    await p.close();
  }
  assert.ok(lines.length >= 3, `one line per failed streak: ${lines.length}`);
  assert.ok(lines.every((l) => JSON.parse(l).event === "policy:llm-retries"));
  assert.match(errors.join("\n"), /HTTP 401/);
  for (const s of [...errors, ...lines]) assert.ok(!s.includes(KEY), s);
});

test("many policies on one endpoint share its concurrency limit", async () => {
  const slow = await startLlmStandIn({ delayMs: 150 });
  try {
    const ps = Array.from({ length: 8 }, () => llmPolicy({ endpoint: slow.endpoint, model: "m", concurrency: 2, screenshot: false }));
    await Promise.all(ps.map((p) => p.reset(context(1))));
    const ds = await Promise.all(ps.map((p) => p.act(screenObs())));
    assert.equal(ds.length, 8);
    assert.equal(slow.maxInFlight, 2);
    await Promise.all(ps.map((p) => p.close()));
    // With the limited policies closed, a new one with a higher limit is not held to the old one.
    const wide = Array.from({ length: 4 }, () => llmPolicy({ endpoint: slow.endpoint, model: "m", concurrency: 4, screenshot: false }));
    await Promise.all(wide.map((p) => p.act(screenObs())));
    assert.equal(slow.maxInFlight, 4);
    await Promise.all(wide.map((p) => p.close()));
  } finally {
    await slow.close();
  }
});

test("endpoints outside the allow-list are refused; bad options name the option", async () => {
  assert.throws(() => llmPolicy({ endpoint: "http://10.1.2.3:8000/v1", model: "m" }), (e: unknown) => e instanceof PolicyError && e.code === "url_not_allowed");
  assert.throws(() => llmPolicy({ endpoint: "http://169.254.169.254/v1", model: "m", allowedHosts: ["*"] }), (e: unknown) => e instanceof PolicyError && e.code === "url_not_allowed");
  assert.throws(() => llmPolicy({ endpoint: llm.endpoint, model: "m", temperature: 7 }), /temperature must be from 0 to 2/);
  assert.throws(() => llmPolicy({ endpoint: llm.endpoint, model: "bad model" }), /model "bad model"/);
});

test("the stand-in's solver answers by the prompt's element list", async () => {
  const solver = await startLlmStandIn({ solver: [{ type_into: "Search notes", text: "milk" }, { click_text: "NEW NOTE" }] });
  try {
    const p = llmPolicy({ endpoint: solver.endpoint, model: "m", screenshot: false });
    const d = await p.act(screenObs());
    assert.deepEqual(d.action, { action_type: "input_text", text: "milk", index: 1 });
    const typed = [ELEMENTS[0]!, element(1, "milk", { class_name: "android.widget.EditText", hint_text: "Search notes", is_editable: true }), ELEMENTS[2]!];
    const d2 = await p.act(screenObs(1, { elements: typed }));
    assert.deepEqual(d2.action, { action_type: "click", index: 2 });
    await p.close();
    const models = await (await fetch(`${solver.endpoint}/models`)).json();
    assert.equal((models as { data: { id: string }[] }).data[0]!.id, "stand-in");
  } finally {
    await solver.close();
  }
});

test("extractAction: the action alone, fenced, after Action:, among prose; none is a reason", () => {
  assert.deepEqual(extractAction('{"action_type":"wait"}'), { value: { action_type: "wait" } });
  assert.deepEqual(extractAction('```json\n{"action_type": "navigate_home"}\n```\nthen more'), { value: { action_type: "navigate_home" } });
  assert.deepEqual(extractAction('Reason: {"a": 1} is not it.\nAction: {"action_type": "click", "index": 3, "text": "}{"}'), { value: { action_type: "click", index: 3, text: "}{" } });
  assert.deepEqual(extractAction("Action: {'action_type': 'long_press', 'index': 4, 'clear_text': True}"), { value: { action_type: "long_press", index: 4, clear_text: true } });
  assert.deepEqual(extractAction("no json here"), { invalid: "the answer holds no JSON object" });
  assert.deepEqual(extractAction('{"x": 1}'), { invalid: "the JSON object in the answer has no action_type" });
  assert.deepEqual(extractAction("   "), { invalid: "the answer was empty" });
  assert.ok("invalid" in extractAction("{".repeat(100_000)), "a pathological answer ends, invalid");
});

test("spec llm:<model>@<endpoint>, and a prompt file's unknown placeholder named by file:line", async () => {
  assert.deepEqual(parsePolicySpec("llm:Qwen/Qwen2.5-VL-7B-Instruct@http://127.0.0.1:8000/v1"), { kind: "llm", model: "Qwen/Qwen2.5-VL-7B-Instruct", endpoint: "http://127.0.0.1:8000/v1" });
  assert.throws(() => parsePolicySpec("llm:model"), /llm: needs <model>@<endpoint>/);
  const p = await policyFromSpec(`llm:stand-in@${llm.endpoint}`, { llm: { apiKey: KEY, screenshot: false } });
  assert.match(p.name, /^llm:stand-in@127\.0\.0\.1:\d+\/v1$/);
  assert.equal(p.needsPixels, false);
  await p.close();
  const dir = mkdtempSync(join(tmpdir(), "llm-prompt-"));
  try {
    writeFileSync(join(dir, "p.txt"), "Goal: {{goal}}\nElements:\n{{elementz}}\n");
    assert.throws(() => loadPromptTemplate(join(dir, "p.txt")), /p\.txt:3: unknown placeholder \{\{elementz\}\}/);
    writeFileSync(join(dir, "ok.txt"), "Do {{goal}} on:\n{{elements}}\nAnswer one JSON action.");
    llm.setScript([{ json: { action_type: "wait" } }]);
    const custom = llmPolicy({ endpoint: llm.endpoint, model: "m", apiKey: KEY, promptTemplate: loadPromptTemplate(join(dir, "ok.txt")), screenshot: false });
    await custom.act(screenObs());
    assert.match(llm.requests.at(-1)!.promptText, /^Do Create a note titled milk on:\n0: /);
    await custom.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a step waiting for the endpoint's slot ends when its signal aborts, and gives no slot away", async () => {
  const slow = await startLlmStandIn({ delayMs: 400 });
  try {
    const [a, b] = [0, 1].map(() => llmPolicy({ endpoint: slow.endpoint, model: "m", concurrency: 1, screenshot: false }));
    const first = a!.act(screenObs());
    const ac = new AbortController();
    const waiting = b!.act(screenObs(), ac.signal);
    setTimeout(() => ac.abort(), 100);
    await rejectsWithPolicyError(waiting, "aborted", /waiting for a free request slot/, false);
    assert.deepEqual((await first).action, { action_type: "wait" });
    assert.deepEqual((await b!.act(screenObs())).action, { action_type: "wait" }, "the slot came back");
    assert.equal(slow.requests.length, 2);
    assert.equal(slow.maxInFlight, 1);
    await a!.close();
    await b!.close();
  } finally {
    await slow.close();
  }
});

test("a rotated screen: the prompt states the size as shown (width and height swapped), the frame x, y are checked in", async () => {
  for (const [orientation, size] of [
    [0, "x\": <0..1080>, \"y\": <0..1920>"],
    [1, "x\": <0..1920>, \"y\": <0..1080>"],
    [2, "x\": <0..1080>, \"y\": <0..1920>"],
    [3, "x\": <0..1920>, \"y\": <0..1080>"],
  ] as const) {
    const { d } = await step([{ json: { action_type: "click", x: 1500, y: 900 } }], { screenshot: false }, { ...screenObs(0), orientation, screen: { width: 1080, height: 1920 } });
    assert.deepEqual(d.action, { action_type: "click", x: 1500, y: 900 });
    assert.ok(llm.requests.at(-1)!.promptText.includes(size), `orientation ${orientation}: ${size}`);
  }
  // A custom template's placeholders get the same numbers.
  const { d } = await step([{ json: { action_type: "wait" } }], { screenshot: false, promptTemplate: "W={{screen_width}} H={{screen_height}} {{elements}}" }, { ...screenObs(0), orientation: 1, screen: { width: 1080, height: 1920 } });
  assert.ok(d.action);
  assert.match(llm.requests.at(-1)!.promptText, /^W=1920 H=1080 /);
});
