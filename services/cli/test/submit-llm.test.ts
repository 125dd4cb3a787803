/** `farm submit --policy llm …` against a private Redis: the campaign (and so each job) carries spec and settings, never the key. */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { startRedis, type LocalRedis } from "@farm/local-services";
import { REPO } from "./fixtures.ts";

const run = promisify(execFile);
const FARM = path.join(REPO, "services/cli/bin/farm.js");
const KEY = "sk-submit-0c4f2a9e7b";
let redis: LocalRedis;
let dir: string;
let env: NodeJS.ProcessEnv;

before(async () => {
  redis = await startRedis();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "farm-submit-llm-"));
  env = { ...process.env, REDIS_URL: redis.url, FARM_QUEUE_PREFIX: `{llm${process.pid}}`, FARM_LOG_LEVEL: "silent", FARM_API_URL: "", FARM_API_TOKEN: "", FARM_LLM_API_KEY: KEY };
});
after(async () => {
  await redis.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const farm = (...args: string[]) => run(process.execPath, [FARM, ...args], { env, cwd: REPO, timeout: 120_000 });

test("farm submit --policy llm: spec and settings in the campaign, the key nowhere; bad flags are named", async () => {
  const prompt = path.join(dir, "prompt.txt");
  fs.writeFileSync(prompt, "Goal: {{goal}}\n{{elements}}\nOne JSON action.");
  const r = await farm("submit", "tasks/todo_create_note.textproto", "--episodes", "2", "--policy", "llm", "--llm-endpoint", "http://127.0.0.1:8000/v1", "--llm-model", "Qwen/Qwen2.5-VL-7B-Instruct", "--llm-temperature", "0.2", "--llm-no-screenshot", "--llm-prompt", prompt, "--json");
  const policy = JSON.parse(r.stdout).campaign.spec.policy;
  assert.deepEqual(policy, { spec: "llm:Qwen/Qwen2.5-VL-7B-Instruct@http://127.0.0.1:8000/v1", llm: { temperature: 0.2, screenshot: false, promptTemplate: "Goal: {{goal}}\n{{elements}}\nOne JSON action." } });
  // The refusals below submit nothing: they run beside `farm status`, each with its own prompt file.
  const badPrompt = path.join(dir, "bad-prompt.txt");
  fs.writeFileSync(badPrompt, "{{goals}}");
  const [status] = await Promise.all([
    farm("status", "--json"),
    assert.rejects(farm("submit", "tasks/todo_create_note.textproto", "--episodes", "1", "--policy", "llm:m@http://127.0.0.1:8000/v1", "--llm-prompt", badPrompt), (e: { stderr: string }) => {
      assert.match(e.stderr, /bad-prompt\.txt:1: unknown placeholder \{\{goals\}\}/);
      return true;
    }),
    assert.rejects(farm("submit", "tasks/todo_create_note.textproto", "--episodes", "1", "--policy", "llm", "--llm-endpoint", "http://127.0.0.1:8000/v1", "--llm-model", "m", "--llm-max-tokens", "0"), (e: { stderr: string }) => {
      assert.match(e.stderr, /--llm-max-tokens must be an integer in 1\.\.32768, got '0'/);
      return true;
    }),
  ]);
  assert.ok(!`${r.stdout}${r.stderr}${status.stdout}`.includes(KEY));
});
