/**
 * Protocol 2 (PROTOCOL.md): step type, reward and discount with every step, episode ends for servers that
 * declare protocol 2 (and never for protocol 1 servers), and the batched mode with per-device errors.
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { httpPolicy, PolicyBatcher, type Observation } from "../src/index.ts";
import { context, observation, rejectsWithPolicyError as rejectsWith } from "./helpers.ts";

interface Seen {
  path: string;
  body: Record<string, unknown>;
}

let server: Server;
let base: string;
const seen: Seen[] = [];

before(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      const json = JSON.parse(body) as Record<string, unknown>;
      const path = req.url ?? "";
      seen.push({ path, body: json });
      if (path === "/v1") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ actionType: "LIFT", touchPosition: [0, 0] }));
      } else if (path === "/v2") {
        res.writeHead(200, { "content-type": "application/json", "x-policy-protocol": "2" });
        res.end(json.type === "episode_end" ? "{}" : JSON.stringify({ actionType: "TOUCH", touchPosition: [0.5, 0.5] }));
      } else if (path === "/batch") {
        const items = json.batch as { id: string; type: string; observation?: { stepIndex: number } }[];
        // stepIndex 13 is an item the model fails on; 14 an item it leaves out; 15 an invalid action.
        const results = items
          .filter((i) => i.type === "step" && i.observation!.stepIndex !== 14)
          .map((i) =>
            i.observation!.stepIndex === 13 ? { id: i.id, error: "NaN in logits" } : { id: i.id, action: i.observation!.stepIndex === 15 ? { actionType: "JUMP" } : { actionType: "TOUCH", touchPosition: [i.observation!.stepIndex / 100, 0.5] } },
          );
        setTimeout(() => {
          res.writeHead(200, { "content-type": "application/json", "x-policy-protocol": "2", "x-policy-version": "batched-1" });
          res.end(JSON.stringify({ results }));
        }, 0);
      } else if (path === "/batch-down") {
        res.writeHead(503, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: "overloaded" }));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((r) => server.close(() => r())));

const endInfo = { reward: 4, discount: 0, episodeReturn: 12, steps: 3, outcome: "terminated", cause: "episode_end" };
const mid = (i: number, reward: number): Observation => ({ ...observation(i), stepType: "MID", reward, discount: 1 });

test("a step carries step type, the previous reward and discount, the episode and the v1 fields", async () => {
  seen.length = 0;
  const p = httpPolicy(`${base}/v2`);
  await p.reset(context(9, 2));
  await p.act({ ...observation(0), stepType: "FIRST", reward: 0, discount: 1 });
  await p.act(mid(1, 2.5));
  await p.endEpisode!(endInfo);
  const [first, second, end] = seen.map((s) => s.body);
  assert.equal(first!.protocol, 2);
  assert.equal(first!.type, "step");
  assert.equal(first!.stepType, "first");
  assert.equal(first!.reward, 0);
  assert.deepEqual(first!.context, context(9, 2));
  assert.equal((first!.observation as { stepIndex: number }).stepIndex, 0);
  assert.equal(second!.stepType, "mid");
  assert.equal(second!.reward, 2.5);
  assert.equal(second!.discount, 1);
  assert.equal((first!.episode as { id: string }).id, (second!.episode as { id: string }).id);
  assert.deepEqual({ ...end, episode: undefined }, { protocol: 2, type: "episode_end", stepType: "last", ...endInfo, episode: undefined });
  assert.equal((end!.episode as { id: string }).id, (first!.episode as { id: string }).id);
  await p.reset(context(10, 3));
  await p.act(observation(0));
  assert.notEqual((seen[3]!.body.episode as { id: string }).id, (first!.episode as { id: string }).id, "a new episode has a new id");
});

test("a protocol 1 server (no X-Policy-Protocol) is never sent an episode end", async () => {
  seen.length = 0;
  const p = httpPolicy(`${base}/v1`);
  await p.reset(context(1));
  assert.deepEqual(await p.act(observation(0)), { actionType: "LIFT", touchPosition: [0, 0] });
  await p.endEpisode!(endInfo);
  assert.deepEqual(seen.map((s) => s.body.type), ["step"]);
});

test("batched: many devices' steps travel in one request and each gets its own action", async () => {
  seen.length = 0;
  const batcher = new PolicyBatcher({ windowMs: 50 });
  const policies = Array.from({ length: 8 }, () => batcher.policy(`${base}/batch`));
  await Promise.all(policies.map((p, i) => p.reset(context(i))));
  const actions = await Promise.all(policies.map((p, i) => p.act(mid(i, i))));
  // Each answer carries the batch response's X-Policy-Version (issue 38).
  const touch = (x: number) => ({ actionType: "TOUCH", touchPosition: [x, 0.5] });
  actions.forEach((a, i) => assert.deepEqual(a, { action: touch(i / 100), given: JSON.stringify(touch(i / 100)), version: "batched-1" }));
  assert.equal(seen.length, 1, "one request for 8 devices");
  const batch = seen[0]!.body.batch as { id: string; reward: number }[];
  assert.equal(batch.length, 8);
  assert.equal(new Set(batch.map((b) => b.id)).size, 8, "each device has its own id");
  assert.deepEqual(batch.map((b) => b.reward).sort((a, b) => a - b), [0, 1, 2, 3, 4, 5, 6, 7]);
  assert.equal(policies[0]!.version, "batched-1");
  // Episode ends ride in batches too.
  await Promise.all(policies.map((p) => p.endEpisode!(endInfo)));
  assert.equal(seen.length, 2);
  assert.ok((seen[1]!.body.batch as { type: string }[]).every((b) => b.type === "episode_end"));
  batcher.close();
});

test("batched: an item's error stays with its device; the others get their actions", async () => {
  seen.length = 0;
  const batcher = new PolicyBatcher({ windowMs: 50 });
  const url = `${base}/batch`;
  const [ok, failing, missing, invalid] = [0, 1, 2, 3].map(() => batcher.policy(url));
  const results = await Promise.allSettled([ok!.act(mid(12, 0)), failing!.act(mid(13, 0)), missing!.act(mid(14, 0)), invalid!.act(mid(15, 0))]);
  assert.equal(seen.length, 1);
  const touch = { actionType: "TOUCH", touchPosition: [0.12, 0.5] };
  assert.deepEqual((results[0] as PromiseFulfilledResult<unknown>).value, { action: touch, given: JSON.stringify(touch), version: "batched-1" });
  await rejectsWith(Promise.reject((results[1] as PromiseRejectedResult).reason), "server_error", /batch item d1\): the server reported: "NaN in logits"/, false);
  await rejectsWith(Promise.reject((results[2] as PromiseRejectedResult).reason), "bad_response", /no result for this item/);
  await rejectsWith(Promise.reject((results[3] as PromiseRejectedResult).reason), "bad_response", /not a valid action/);
  batcher.close();
});

test("batched: a failed exchange fails every step of the batch with the same retryable error", async () => {
  const batcher = new PolicyBatcher({ windowMs: 20 });
  const ps = [0, 1, 2].map(() => batcher.policy(`${base}/batch-down`));
  const results = await Promise.allSettled(ps.map((p, i) => p.act(mid(i, 0))));
  for (const r of results) await rejectsWith(Promise.reject((r as PromiseRejectedResult).reason), "http_status", /HTTP 503: "overloaded"/, true);
  batcher.close();
});

test("batched: maxBatch sends at once; a caller abort fails only that device; close fails pending steps as closed", async () => {
  seen.length = 0;
  const batcher = new PolicyBatcher({ windowMs: 1000, maxBatch: 3 });
  const ps = [0, 1, 2, 3].map(() => batcher.policy(`${base}/batch`));
  const t0 = performance.now();
  await Promise.all(ps.slice(0, 3).map((p, i) => p.act(mid(i, 0))));
  assert.ok(performance.now() - t0 < 900, "a full batch does not wait for the window");
  const ac = new AbortController();
  const waiting = ps[0]!.act(mid(1, 0), ac.signal);
  const closing = ps[1]!.act(mid(2, 0));
  ac.abort();
  await rejectsWith(waiting, "aborted", /aborted by the caller/);
  await ps[1]!.close();
  await rejectsWith(closing, "closed", /closed/);
  await rejectsWith(ps[1]!.act(mid(3, 0)), "closed", /after close/);
  batcher.close();
});
