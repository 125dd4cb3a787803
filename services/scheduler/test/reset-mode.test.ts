/**
 * `options.resetMode` at submit: carried to every job; `start-snapshot` refused for a task whose reset draws from
 * the episode's seed, with an error naming the task, the field and the step, before anything is enqueued.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { startRedis, type LocalRedis } from "@farm/local-services";
import { episodeJobId } from "@farm/queue";
import { parseTaskText, TaskCatalog, loadTaskFile } from "@farm/task";
import { fileURLToPath } from "node:url";
import { Scheduler } from "../src/scheduler.ts";
import { SchedulerError } from "../src/errors.ts";
import { uniquePrefix } from "./helpers.ts";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const SEEDED = parseTaskText(
  `id: "seeded_reset"
setup_steps: [ { adb_call: { install_apk: { filesystem: { path: "sim_notes.apk" } } } } ]
reset_steps: [
  { adb_call: { start_random_activity: { activity_list: ["com.farm.simapps.notes/com.farm.simapps.notes.MainActivity"] timeout_sec: 2.0 } } }
]
max_num_steps: 5
log_parsing_config: { filters: ["AndroidRLTask:V"] log_regexps: { reward: "^[Rr]eward: ([-+]?[0-9]*)$" } }
`,
  { sourcePath: path.join(REPO, "tasks", "seeded_reset.textproto"), apkDirs: [path.join(REPO, "tasks/apks")] },
);
const catalog = TaskCatalog.of([loadTaskFile(path.join(REPO, "tasks/classic_2048.textproto")), SEEDED]);

let redis: LocalRedis;
before(async () => {
  redis = await startRedis();
});
after(async () => {
  await redis.close();
});

test("resetMode reaches every job; start-snapshot for a seeded reset is refused at submit, naming task, field and step", async () => {
  const s = await Scheduler.create({ redisUrl: redis.url, prefix: uniquePrefix(), tasks: catalog });
  try {
    const ok = await s.submit({ taskId: "classic_2048", episodes: 3, options: { resetMode: "start-snapshot" } });
    const job = await s.queue.getJob(episodeJobId(ok.campaign.id, 2));
    assert.equal(job?.data.options.resetMode, "start-snapshot");
    // The same task and options in another mode is another campaign (the mode is part of the work).
    const steps = await s.submit({ taskId: "classic_2048", episodes: 3, options: { resetMode: "steps" } });
    assert.notEqual(steps.campaign.id, ok.campaign.id);
    await assert.rejects(s.submit({ taskId: "seeded_reset", episodes: 2, options: { resetMode: "start-snapshot" } }), (e: unknown) => {
      assert.ok(e instanceof SchedulerError);
      assert.equal(e.code, "SPEC_INVALID");
      assert.match(e.message, /options\.resetMode: start-snapshot is refused: task 'seeded_reset' reset_steps\[0\] \(line 4\): start_random_activity/);
      return true;
    });
    await assert.rejects(s.submit({ taskId: "classic_2048", episodes: 1, options: { resetMode: "from-snapshot" } }), /invalid campaign: options\.resetMode/);
    // Other modes run a seeded reset as before.
    assert.equal((await s.submit({ taskId: "seeded_reset", episodes: 1, options: { resetMode: "setup-snapshot" } })).created, true);
  } finally {
    await s.close();
  }
});
