/** The OpenAI-compatible stand-in itself: routes, the key check, scripted statuses, usage, the request record. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { startLlmStandIn } from "../src/index.ts";

test("the LLM stand-in: models, 401 without the key, 404, 400 for a non-JSON body, scripted 429 with Retry-After, usage", async (t) => {
  const llm = await startLlmStandIn({ apiKey: "k-123", model: "tiny", script: [{ status: 429, retryAfterS: 2 }, { fenced: { action_type: "wait" }, usage: { prompt_tokens: 10, completion_tokens: 3 } }] });
  t.after(() => llm.close());
  const post = (body: string, key = "k-123") => fetch(`${llm.endpoint}/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body });
  const chat = JSON.stringify({ model: "tiny", messages: [{ role: "user", content: [{ type: "text", text: "hello" }, { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }] }] });
  assert.deepEqual(((await (await fetch(`${llm.endpoint}/models`)).json()) as { data: { id: string }[] }).data.map((m) => m.id), ["tiny"]);
  assert.equal((await post(chat, "wrong")).status, 401);
  assert.equal((await fetch(`${llm.endpoint}/completions`, { method: "POST" })).status, 404);
  assert.equal((await post("{not json")).status, 400);
  const limited = await post(chat);
  assert.equal(limited.status, 429);
  assert.equal(limited.headers.get("retry-after"), "2");
  const ok = (await (await post(chat)).json()) as { choices: { message: { content: string } }[]; usage: Record<string, number> };
  assert.match(ok.choices[0]!.message.content, /```json\n\{\n {2}"action_type": "wait"\n\}\n```/);
  assert.deepEqual(ok.usage, { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 });
  // After the script: the solver with no rules waits; usage is estimated.
  const after = (await (await post(chat)).json()) as { choices: { message: { content: string } }[]; usage: { prompt_tokens: number } };
  assert.equal(after.choices[0]!.message.content, '{"action_type":"wait"}');
  assert.ok(after.usage.prompt_tokens > 0);
  assert.equal(llm.requests.length, 3, "requests with a JSON body and the right key are recorded");
  assert.equal(llm.requests[0]!.promptText, "hello");
  assert.deepEqual(llm.requests[0]!.images, ["data:image/png;base64,AAAA"]);
});
