/** Reset modes and which tasks start-snapshot refuses (no device: the task model only). */
import assert from "node:assert/strict";
import { test } from "node:test";
import { isResetMode, parseTaskText, RESET_MODES, startSnapshotRefusal } from "../src/index.ts";

const legacy = (reset: string) =>
  parseTaskText(
    `id: "t"
reset_steps: [
  { adb_call: { force_stop: { package_name: "com.example.app" } } },
  ${reset}
]
max_num_steps: 5
log_parsing_config: { filters: ["AndroidRLTask:V"] log_regexps: { reward: "^[Rr]eward: ([-+]?[0-9]*)$" } }
`,
    { sourcePath: "/tmp/t.textproto" },
  );

test("reset modes: exactly the three names", () => {
  assert.deepEqual([...RESET_MODES], ["steps", "setup-snapshot", "start-snapshot"]);
  for (const bad of ["", "Steps", "snapshot", "__proto__", 1, null]) assert.equal(isResetMode(bad), false);
});

test("start-snapshot is refused for each step that draws from (or acts on) the episode's seeded choice, naming it", () => {
  const start = legacy(`{ adb_call: { start_random_activity: { activity_list: ["com.example.app/com.example.app.Main"] timeout_sec: 1.0 } } }`);
  assert.match(startSnapshotRefusal(start.task) ?? "", /^task 't' reset_steps\[1\] \(line 4\): start_random_activity draws from each episode's seed/);
  const stop = legacy(`{ adb_call: { force_stop_random_activity: {} } }`);
  assert.match(startSnapshotRefusal(stop.task) ?? "", /reset_steps\[1\] \(line 4\): force_stop_random_activity/);
  assert.equal(startSnapshotRefusal(legacy(`{ adb_call: { force_stop: { package_name: "com.example.other" } } }`).task), undefined);
  // A catalog entry with only an id cannot tell: not refused here (the worker refuses the job).
  assert.equal(startSnapshotRefusal({ id: "t" }), undefined);
});
