/**
 * The fixed task-family parameters of an episode job (issue 41, libs/task/FAMILIES.md): bounded, refused with
 * JOB_PAYLOAD_INVALID naming the job id and the field, and handed on as a frozen null-prototype object.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { PARAM_VALUE_MAX_CHARS, PARAMS_MAX, QueueError, type EpisodeJobData } from "../src/index.ts";
import { parseEpisodeJob } from "@farm/queue/testing";

const good: EpisodeJobData = { v: 1, campaignId: "c1", episodeIndex: 3, taskId: "example_wifi", taskHash: "a".repeat(64), policy: { spec: "random" }, seed: 45, options: {} };

test("params of scalars are accepted, as a frozen null-prototype object with the same values", () => {
  const params = { state: "on", level: 3, ratio: 0.5, ok: true, note: "two\twords\nand a line", s: "x".repeat(PARAM_VALUE_MAX_CHARS) };
  const job = parseEpisodeJob({ ...good, params }, "c1-3");
  assert.deepEqual({ ...job.params }, params);
  assert.equal(Object.getPrototypeOf(job.params), null);
  assert.ok(Object.isFrozen(job.params));
  // Round trip through JSON (as the queue stores jobs).
  assert.deepEqual({ ...parseEpisodeJob(JSON.parse(JSON.stringify({ ...good, params })), "c1-3").params }, params);
  assert.equal(parseEpisodeJob(good, "c1-3").params, undefined);
  const many = Object.fromEntries(Array.from({ length: PARAMS_MAX }, (_, i) => [`p${i}`, i]));
  assert.equal(Object.keys(parseEpisodeJob({ ...good, params: many }, "c1-3").params!).length, PARAMS_MAX);
});

const refused: [string, unknown, RegExp][] = [
  ["params that are a list", ["on"], /params: must be a JSON object/],
  ["params that are text", '{"state":"on"}', /params: must be a JSON object/],
  ["too many params", Object.fromEntries(Array.from({ length: PARAMS_MAX + 1 }, (_, i) => [`p${i}`, i])), /params: 65 parameters; at most 64/],
  ["a name that is not a parameter name", { State: "on" }, /params: "State" is not a parameter name/],
  ["__proto__ as a name", JSON.parse('{"__proto__": {"polluted": 1}}'), /params: "__proto__" is not a parameter name/],
  ["a nested value", { state: { on: true } }, /params: state: must be a string, a finite number or a boolean/],
  ["a null value", { state: null }, /params: state: must be a string/],
  ["a value too long", { state: "x".repeat(PARAM_VALUE_MAX_CHARS + 1) }, /params: state: 2001 characters; at most 2000/],
  ["a control character", { state: "on\u001b[2J" }, /params: state: no control characters/],
];

for (const [what, params, message] of refused) {
  test(`${what} is refused naming the job and the field`, () => {
    assert.throws(
      () => parseEpisodeJob({ ...good, params }, "c1-3"),
      (e: unknown) => e instanceof QueueError && e.code === "JOB_PAYLOAD_INVALID" && /^job c1-3: /.test(e.message) && message.test(e.message),
    );
  });
}

test("nothing reaches Object.prototype", () => {
  parseEpisodeJob({ ...good, params: JSON.parse('{"constructor": "x", "valueof": 1}') }, "c1-3");
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});
