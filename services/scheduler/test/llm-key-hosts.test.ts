/**
 * With the workers' key hosts set (FARM_LLM_KEY_HOSTS), an `llm:` campaign naming another endpoint fails at submit
 * with an error naming the host and the setting; nothing is stored.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startRedis, type LocalRedis } from "@farm/local-services";
import { Scheduler } from "../src/scheduler.ts";
import { SchedulerError } from "../src/errors.ts";
import { loadSchedulerConfig } from "../src/config.ts";
import { catalog, uniquePrefix } from "./helpers.ts";

let redis: LocalRedis;
before(async () => {
  redis = await startRedis();
});
after(async () => {
  await redis.close();
});

test("an llm campaign whose endpoint is not a key host fails at submit; a key host is accepted", async () => {
  const s = await Scheduler.create({ redisUrl: redis.url, prefix: uniquePrefix(), tasks: catalog, llmKeyHosts: ["models.example.com", "localhost"] });
  try {
    for (const [endpoint, why] of [
      ["https://collector.evil.example/v1", /"collector\.evil\.example" is not one of them/],
      ["http://models.example.com/v1", /only over https/],
    ] as const) {
      await assert.rejects(s.submit({ taskId: "classic_2048", episodes: 1, policy: `llm:m@${endpoint}` }), (e: unknown) => {
        assert.ok(e instanceof SchedulerError);
        assert.equal(e.code, "SPEC_INVALID");
        assert.match(e.message, /invalid campaign: policy: the API key \(FARM_LLM_API_KEY\)/);
        assert.match(e.message, why);
        return true;
      });
    }
    assert.equal((await s.list()).length, 0);
    assert.equal((await s.submit({ taskId: "classic_2048", episodes: 1, policy: "llm:m@https://models.example.com/v1" })).created, true);
    assert.equal((await s.submit({ taskId: "classic_2048", episodes: 1, policy: "llm:m@http://localhost:8000/v1" })).created, true);
    assert.equal((await s.submit({ taskId: "classic_2048", episodes: 1, policy: "random" })).created, true);
  } finally {
    await s.close();
  }
  assert.deepEqual(loadSchedulerConfig({}, { FARM_LLM_KEY_HOSTS: "a.example,b.example" }).llmKeyHosts, ["a.example", "b.example"]);
  assert.equal(loadSchedulerConfig({}, {}).llmKeyHosts, undefined);
  assert.throws(() => loadSchedulerConfig({}, { FARM_LLM_KEY_HOSTS: "*" }), /FARM_LLM_KEY_HOSTS/);
});
