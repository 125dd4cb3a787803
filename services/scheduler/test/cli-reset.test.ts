/** `farm submit --reset MODE` against a private Redis: the mode reaches the campaign; `steps` is the default's id; refusals are named. */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { startRedis, type LocalRedis } from "@farm/local-services";
import { uniquePrefix } from "./helpers.ts";

const run = promisify(execFile);
const REPO = path.resolve(import.meta.dirname, "../../..");
const FARM = path.join(REPO, "services/cli/bin/farm.js");
let redis: LocalRedis;
let env: NodeJS.ProcessEnv;
let dir: string;

before(async () => {
  redis = await startRedis();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "farm-cli-reset-"));
  env = { ...process.env, REDIS_URL: redis.url, FARM_QUEUE_PREFIX: uniquePrefix(), FARM_LOG_LEVEL: "silent", FARM_API_URL: "", FARM_API_TOKEN: "" };
});
after(async () => {
  await redis.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const farm = (...args: string[]) => run(process.execPath, [FARM, ...args], { env, cwd: REPO, timeout: 120_000 });
const failing = (...args: string[]) => farm(...args).then(
  (r) => assert.fail(`expected a failure, got ${r.stdout}`),
  (e: { code: number; stderr: string }) => e,
);

test("farm submit --reset: the mode in the campaign's options; --reset steps is the default campaign; a bad or refused mode is an error", async () => {
  // The commands are independent (distinct specs, or the same spec submitted twice in order): run side by side.
  const seeded = path.join(dir, "seeded_reset.textproto");
  fs.writeFileSync(
    seeded,
    `id: "seeded_reset"
setup_steps: [ { adb_call: { install_apk: { filesystem: { path: "sim_notes.apk" } } } } ]
reset_steps: [
  { adb_call: { start_random_activity: { activity_list: ["com.farm.simapps.notes/com.farm.simapps.notes.MainActivity"] timeout_sec: 2.0 } } }
]
max_num_steps: 5
log_parsing_config: { filters: ["AndroidRLTask:V"] log_regexps: { reward: "^[Rr]eward: ([-+]?[0-9]*)$" } }
`,
  );
  const [start, [plain, steps], bad, both, refused] = await Promise.all([
    farm("submit", "tasks/classic_2048.textproto", "--episodes", "2", "--reset", "start-snapshot", "--json").then((r) => JSON.parse(r.stdout)),
    (async () => {
      const p = (await farm("submit", "tasks/classic_2048.textproto", "--episodes", "3")).stdout.trim();
      return [p, (await farm("submit", "tasks/classic_2048.textproto", "--episodes", "3", "--reset", "steps")).stdout.trim()];
    })(),
    failing("submit", "tasks/classic_2048.textproto", "--episodes", "1", "--reset", "fast"),
    failing("submit", "tasks/classic_2048.textproto", "--episodes", "1", "--reset", "start-snapshot", "--reset-from-snapshot"),
    failing("submit", seeded, "--episodes", "1", "--reset", "start-snapshot"),
  ]);
  assert.equal(start.campaign.spec.options.resetMode, "start-snapshot");
  assert.equal(steps, plain);
  assert.match(bad.stderr, /--reset must be one of steps, setup-snapshot, start-snapshot, got 'fast'/);
  assert.match(both.stderr, /--reset-from-snapshot means --reset setup-snapshot; it contradicts --reset start-snapshot/);
  assert.match(refused.stderr, /options\.resetMode: start-snapshot is refused: task 'seeded_reset' reset_steps\[0\] \(line 4\): start_random_activity/);
});
