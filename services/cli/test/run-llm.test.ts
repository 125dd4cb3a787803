/**
 * `farm run --sim` with `--policy llm` against the OpenAI-compatible stand-in in solver mode: the notes task is solved
 * through real element indices (the stand-in finds NEW NOTE, the title and body fields and SAVE in the prompt's list).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import path from "node:path";
import { after, before, test } from "node:test";
import { startLlmStandIn, type LlmStandIn } from "@farm/local-services";
import { REPO } from "./fixtures.ts";

const KEY = "sk-run-test-8d1c0b7e";
let llm: LlmStandIn;

before(async () => {
  llm = await startLlmStandIn({
    apiKey: KEY,
    solver: [{ click_text: "NEW NOTE" }, { type_into: "title_input", text: "milk" }, { type_into: "body_input", text: "2 litres" }, { click_text: "SAVE" }],
  });
});
after(async () => {
  await llm.close();
});

function farmRun(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(REPO, "services/cli/bin/farm.js"), "run", ...args], { cwd: REPO, env: { ...process.env, FARM_LOG_LEVEL: "warn", ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b) => (stdout += b));
    child.stderr.on("data", (b) => (stderr += b));
    const t = setTimeout(() => child.kill("SIGKILL"), 240_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(t);
      resolve({ code, stdout, stderr });
    });
  });
}

test("farm run --sim todo_create_note --policy llm reaches reward 1 against the stand-in solver", async () => {
  const task = path.join(REPO, "tasks", "todo_create_note.textproto");
  const r = await farmRun([task, "--episodes", "1", "--sim", "--settle-ms", "20", "--policy", "llm", "--llm-endpoint", llm.endpoint, "--llm-model", "stand-in", "--llm-screenshot-max-side", "128"], { FARM_LLM_API_KEY: KEY });
  assert.equal(r.code, 0, r.stderr);
  assert.match(llm.requests[0]!.promptText, /"text":"NEW NOTE"/);
  assert.match(r.stdout, /^episode=0 steps=\d+ reward=1 outcome=terminated cause=episode_end/m, `${r.stdout}\n${r.stderr}`);
  const summary = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as { policy: string; reward_mean: number };
  assert.equal(summary.reward_mean, 1);
  assert.match(summary.policy, /^llm:stand-in@127\.0\.0\.1:\d+\/v1@/);
  assert.ok(llm.requests.length >= 4, `${llm.requests.length} requests`);
  const first = llm.requests[0]!;
  assert.equal(first.authorization, `Bearer ${KEY}`);
  assert.match(first.promptText, /Goal: Create a note titled milk containing 2 litres/);
  assert.match(first.promptText, /"text":"NEW NOTE"/);
  assert.equal(first.images.length, 1);
  assert.match(llm.requests.at(-1)!.promptText, /Step \d+: .*"input_text".* → done/);
  assert.ok(!`${r.stdout}${r.stderr}`.includes(KEY), "the key is in no output");
});

test("--policy llm without an endpoint, or --llm-* flags with another policy, are errors naming the flags", async () => {
  const task = path.join(REPO, "tasks", "todo_create_note.textproto");
  const a = await farmRun([task, "--policy", "llm", "--llm-model", "m"]);
  assert.notEqual(a.code, 0);
  assert.match(a.stderr, /--policy llm needs --llm-endpoint URL/);
  const b = await farmRun([task, "--policy", "random", "--llm-temperature", "0.2"]);
  assert.notEqual(b.code, 0);
  assert.match(b.stderr, /--llm-temperature only go with --policy llm/);
});
