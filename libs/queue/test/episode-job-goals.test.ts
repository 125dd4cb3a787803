/**
 * The goal, game config and observation fields of an episode job (issue 28): accepted when bounded, refused with
 * JOB_PAYLOAD_INVALID naming the job id and the field otherwise.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { QueueError, type EpisodeJobData } from "../src/index.ts";
import { GAME_CONFIG_MAX_CHARS, GOAL_MAX_CHARS, parseEpisodeJob } from "@farm/queue/testing";

const good: EpisodeJobData = { v: 1, campaignId: "c1", episodeIndex: 3, taskId: "todo_create_note", taskHash: "a".repeat(64), policy: { spec: "random" }, seed: 45, options: {} };

test("a job with a goal, a game config, a11yEvery and maxInvalidActions is accepted as given", () => {
  const data = { ...good, goal: "Create a note titled eggs\twith a body", gameConfig: { title: "eggs", nested: { n: [1, 2] } }, options: { a11yEvery: 1, frameEvery: 0, maxInvalidActions: 5 } };
  assert.deepEqual(parseEpisodeJob(data, "c1-3"), data);
});

const refused: [string, Record<string, unknown>, RegExp][] = [
  ["an empty goal", { goal: "" }, /goal: must not be empty/],
  ["a goal too long", { goal: "x".repeat(GOAL_MAX_CHARS + 1) }, /goal: at most 2000/],
  ["a goal with a control character", { goal: "milk\u001b[2J" }, /goal: no control characters/],
  ["a goal that is not text", { goal: 7 }, /goal:/],
  ["a game config that is an array", { gameConfig: ["title"] }, /gameConfig: must be a JSON object/],
  ["a game config that is text", { gameConfig: '{"title":"x"}' }, /gameConfig: must be a JSON object/],
  ["a game config too large", { gameConfig: { title: "x".repeat(GAME_CONFIG_MAX_CHARS) } }, /gameConfig: at most 4096 characters/],
  ["a negative a11yEvery", { options: { a11yEvery: -1 } }, /options\.a11yEvery/],
  ["a fractional maxInvalidActions", { options: { maxInvalidActions: 1.5 } }, /options\.maxInvalidActions/],
];

for (const [what, extra, message] of refused) {
  test(`${what} is refused naming the job and the field`, () => {
    assert.throws(
      () => parseEpisodeJob({ ...good, ...extra }, "c1-3"),
      (e: unknown) => e instanceof QueueError && e.code === "JOB_PAYLOAD_INVALID" && /^job c1-3: /.test(e.message) && message.test(e.message),
    );
  });
}
