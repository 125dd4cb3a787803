/**
 * The log parser's listener table: one line that every kind matches yields the kinds' events in the documented
 * order (score, reward, episode_end, extra, json_extra, reward_event), several episode_end regexes yield one
 * episode end, and a bad number of any numeric kind is a malformed event of that kind.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { LogParser } from "../src/log-parser.ts";
import { canonicalLogParsing, py } from "./helpers.ts";

const ANY = "^(?P<name>x)(?P<extra>[0-9]+)(?P<json_extra>)";

test("a line every kind matches: events in table order, one per listener, one episode end however many regexes match", () => {
  const p = new LogParser(
    canonicalLogParsing({
      score: py("^x([0-9]+)"),
      reward: [py("^x([0-9]+)"), py("^x([0-9])")],
      episodeEnd: [py("^x"), py("^x1")],
      extra: [py(ANY)],
      jsonExtra: [py("^x.*(?P<json_extra>\\{.*\\})$")],
      rewardEvent: [{ event: py("^x"), reward: 0.5 }],
    }),
  );
  assert.deepEqual(p.parse({ message: 'x12 {"k": 1}' }), [
    { kind: "score", score: 12, reward: 12 },
    { kind: "reward", reward: 12, source: "reward" },
    { kind: "reward", reward: 1, source: "reward" },
    { kind: "episode_end" },
    { kind: "extra", name: "x", value: 12, source: "extra" },
    { kind: "extra", name: "k", value: 1, source: "json_extra" },
    { kind: "reward", reward: 0.5, source: "reward_event" },
  ]);
  // The running score carries to the next line, and reset() zeroes it.
  assert.deepEqual(p.parseMessage("x15")[0], { kind: "score", score: 15, reward: 3 });
  p.reset();
  assert.deepEqual(p.parseMessage("x15")[0], { kind: "score", score: 15, reward: 15 });
});

test("a bad number is a malformed event of its own kind (score or reward), and the other listeners still fire", () => {
  const p = new LogParser(canonicalLogParsing({ score: py("^s=(.*)$"), reward: [py("^s=(.*)$")], rewardEvent: [{ event: py("^s="), reward: 2 }] }));
  const evs = p.parseMessage("s=1e999");
  assert.deepEqual(
    evs.map((e) => (e.kind === "malformed" ? `malformed:${e.what}` : e.kind)),
    ["malformed:score", "malformed:reward", "reward"],
  );
  assert.ok(evs.every((e) => e.kind !== "malformed" || e.detail.startsWith(`${e.what} "1e999"`)), JSON.stringify(evs));
});
