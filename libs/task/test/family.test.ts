/** Task families (FAMILIES.md): the loader's model, identity, task sets, and every error at its file:line:column. */
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { FAMILY_LIMITS, formatTaskError, loadTaskFile, loadTaskSet, TaskCatalog, TaskLoadError, type LoadedTask } from "../src/index.ts";
import { tasksDir } from "./helpers.ts";

const dir = mkdtempSync(join(tmpdir(), "farm-family-"));
after(() => rmSync(dir, { recursive: true, force: true }));
copyFileSync(join(tasksDir, "settings_turn_on_wifi.textproto"), join(dir, "wifi.textproto"));
mkdirSync(join(dir, "apks"));
writeFileSync(join(dir, "apks", "sim_settings.apk"), "not really an apk");

let n = 0;
/** Writes `text` as a family file in the test folder and returns its path. */
function family(text: string, name = `f${++n}.family.yaml`): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

function load(text: string): LoadedTask {
  return loadTaskFile(family(text));
}

function loadError(text: string): TaskLoadError {
  try {
    load(text);
  } catch (e) {
    if (e instanceof TaskLoadError) return e;
    throw e;
  }
  throw new Error(`expected the family to be rejected, but it loaded:\n${text}`);
}

const HEAD = "family: wifi_set\ntask: wifi.textproto\n";

test("the example family loads: the task it runs with the family's id, the goal as description, its params, setup and checks", () => {
  const loaded = loadTaskFile(join(tasksDir, "families", "example_wifi.family.yaml"));
  const base = loadTaskFile(join(tasksDir, "settings_turn_on_wifi.textproto"));
  assert.equal(loaded.task.id, "example_wifi");
  assert.equal(loaded.task.description, "Turn Wi-Fi {state}.");
  assert.deepEqual(loaded.task.resetSteps, base.task.resetSteps);
  assert.equal(loaded.dialect, base.dialect);
  assert.match(loaded.hash, /^[0-9a-f]{64}$/);
  assert.notEqual(loaded.hash, base.hash);
  const f = loaded.family!;
  assert.equal(f.id, "example_wifi");
  assert.equal(f.taskPath, join(tasksDir, "settings_turn_on_wifi.textproto"));
  assert.deepEqual(f.goal, { text: "Turn Wi-Fi {state}.", line: 5 });
  assert.deepEqual(f.params.map((p) => [p.name, p.spec.kind, p.line]), [["state", "choice", 7], ["command", "map", 8], ["start_command", "map", 9], ["wifi_value", "map", 10]]);
  const map = f.params[3]!.spec;
  assert.ok(map.kind === "map" && map.values.get("on") === "1" && map.values.get("off") === "0");
  assert.deepEqual(f.setup, [{ kind: "shell", command: { text: "svc wifi {start_command}", line: 12 }, timeoutSec: 0, line: 12 }]);
  assert.equal(f.checks!.combine, "all");
  assert.equal(f.checks!.items[0]!.name, "wifi setting");
  assert.deepEqual(f.checks!.items[0]!.compare, { kind: "equals", value: { text: "{wifi_value}", line: 18 } });
});

test("every parameter kind, set-up step, source and comparison loads into the model", () => {
  const loaded = load(`${HEAD}goal: "Note {title} on {day}: {{literal}}"
params:
  n: { int: { min: -3, max: 9 } }
  x: { number: { min: 0.5, max: 2, decimals: 1 } }
  title: { words: { count: 3 } }
  body: { words: { min: 1, max: 4 } }
  code: { text: { length: 6, alphabet: "0123456789" } }
  day: { date: { from: "2023-10-01", to: "2023-10-31", format: "%A %e %B %Y (%%)" } }
  flag: { choice: [true, false] }
  mapped: { map: { param: flag, values: { "true": 1, "false": 0 } } }
  fixed: { const: 1.50 }
  path: { format: "/sdcard/{title}-{n}.txt" }
setup:
  - shell: "echo {title} > /sdcard/x"
    timeout_sec: 5
  - setting: { namespace: secure, key: "k_{n}", value: "{x}" }
  - file: { path: "{path}", content: "hello {body}" }
  - sleep: 0.5
checks:
  combine: fraction
  every_steps: 3
  reward: 2.5
  items:
    - shell: "cat {path}"
      not_equals: ""
    - file: { path: "/sdcard/{code}" }
      exists: false
    - sql: { db: /data/data/com.x/databases/notes.db, query: "SELECT count(*) FROM notes WHERE title = :title AND t = '10:30'", rows: count }
      number: { op: ">=", value: 1 }
    - tree: { text: "{title}", text_regex: "^a.*", resource_id: "id/x", class: android.widget.CheckBox, checked: true, selected: false, enabled: true }
      exists: true
    - activity: {}
      regex: "^com\\\\.x/"
    - answer:
      fuzzy: "{n}"
    - setting: { namespace: global, key: wifi_on }
      json: { path: "$.a[0]['b']", equals: 1.0 }
      timeout_sec: 2
`);
  const f = loaded.family!;
  assert.deepEqual(f.params.map((p) => p.spec.kind), ["int", "number", "words", "words", "text", "date", "choice", "map", "const", "format"]);
  assert.deepEqual(f.params[1]!.spec, { kind: "number", min: 0.5, max: 2, decimals: 1 });
  assert.deepEqual(f.params[2]!.spec, { kind: "words", min: 3, max: 3 });
  assert.deepEqual(f.params[5]!.spec, { kind: "date", from: "2023-10-01", to: "2023-10-31", format: "%A %e %B %Y (%%)" });
  assert.deepEqual(f.params[6]!.spec, { kind: "choice", values: [true, false] });
  assert.deepEqual(f.params[8]!.spec, { kind: "const", value: 1.5 });
  assert.deepEqual(f.setup.map((s) => s.kind), ["shell", "setting", "file", "sleep"]);
  assert.equal((f.setup[0] as { timeoutSec: number }).timeoutSec, 5);
  const c = f.checks!;
  assert.deepEqual([c.combine, c.everySteps, c.reward], ["fraction", 3, 2.5]);
  assert.deepEqual(c.items.map((i) => `${i.name}|${i.compare.kind}`), ["checks[0] shell|not_equals", "checks[1] file|exists", "checks[2] sql|number", "checks[3] tree|exists", "checks[4] activity|regex", "checks[5] answer|fuzzy", "checks[6] setting|json"]);
  const sql = c.items[2]!.source;
  assert.ok(sql.kind === "sql" && sql.rows === "count" && sql.query.includes(":title"));
  const json = c.items[6]!.compare;
  // A number written where text is compared keeps its spelling.
  assert.deepEqual(json, { kind: "json", path: "$.a[0]['b']", then: { kind: "equals", value: { text: "1.0", line: 39 } } });
  assert.equal(c.items[6]!.timeoutSec, 2);
  const tree = c.items[3]!.source;
  assert.ok(tree.kind === "tree" && tree.textRegex!.test("abc") && tree.className!.text === "android.widget.CheckBox" && tree.checked === true && tree.selected === false);
});

test("a task_server family: no params, setup or checks of its own", () => {
  const f = load(`${HEAD}task_server: { url: "http://127.0.0.1:8765", class: "SystemWifiTurnOn", timeout_sec: 30 }\n`).family!;
  assert.deepEqual(f.taskServer, { url: "http://127.0.0.1:8765", className: "SystemWifiTurnOn", timeoutSec: 30 });
  assert.deepEqual(f.params, []);
});

test("identity: the hash covers the family's content and the task's, not its location or comments", () => {
  const text = `${HEAD}goal: "Turn Wi-Fi {state}."\nparams:\n  state: { choice: ["on", "off"] }\n`;
  const a = load(text);
  const b = load(`# a comment\n${text}`);
  assert.equal(a.hash, b.hash);
  assert.notEqual(load(text.replace('"off"', '"of"')).hash, a.hash);
  assert.notEqual(load(text.replace("Turn", "Set")).hash, a.hash);
  const m1 = load(`${HEAD}params:\n  s: { choice: [a, b] }\n  v: { map: { param: s, values: { a: 1, b: 2 } } }\n`);
  const m2 = load(`${HEAD}params:\n  s: { choice: [a, b] }\n  v: { map: { param: s, values: { b: 2, a: 1 } } }\n`);
  const m3 = load(`${HEAD}params:\n  s: { choice: [a, b] }\n  v: { map: { param: s, values: { a: 1, b: 3 } } }\n`);
  assert.equal(m1.hash, m2.hash);
  assert.notEqual(m1.hash, m3.hash);
});

test("task sets and the catalog take families beside task files; a taken id is an error at the family: line", () => {
  const sub = mkdtempSync(join(dir, "set-"));
  copyFileSync(join(dir, "wifi.textproto"), join(sub, "wifi.textproto"));
  writeFileSync(join(sub, "a.family.yaml"), `family: fam_a\ntask: wifi.textproto\n`);
  writeFileSync(join(sub, "z.family.yaml"), `# again\nfamily: settings_turn_on_wifi\ntask: wifi.textproto\n`);
  writeFileSync(join(sub, "c.family.yaml"), `family: [\n`);
  const { tasks, errors } = loadTaskSet([sub]);
  assert.deepEqual(tasks.map((t) => t.task.id).sort(), ["fam_a", "settings_turn_on_wifi"]);
  assert.deepEqual(errors.map((e) => [e.code, e.line, e.column]), [["syntax", 2, 1], ["duplicate_id", 2, 1]]);
  assert.match(formatTaskError(errors[1]!), /z\.family\.yaml:2:1: family: task id "settings_turn_on_wifi" is already used by .*wifi\.textproto/);
  const catalog = TaskCatalog.fromFiles([sub]);
  assert.equal(catalog.get("fam_a")?.family?.id, "fam_a");
});

/** [what, family text, line:column, field, message pattern] */
const BAD: [string, string, string, string, RegExp][] = [
  ["yaml syntax", `${HEAD}goal: "open\n`, "4:1", "", /YAML/],
  ["a duplicate key", `${HEAD}task: again.textproto\n`, "3:1", "", /a key is written twice/],
  ["an unknown top-level key", `${HEAD}gaol: "x"\n`, "3:1", "gaol", /unknown key 'gaol'.*has: family, task, goal/],
  ["an unknown key in a parameter", `${HEAD}params:\n  a: { int: { min: 1, max: 2, step: 1 } }\n`, "4:31", "params.a.int.step", /unknown key 'step'/],
  ["a missing family id", `task: wifi.textproto\n`, "1:1", "", /family: missing/],
  ["a bad family id", `family: "no spaces"\ntask: wifi.textproto\n`, "1:9", "family", /not a task id/],
  ["a missing task file", `family: x\ntask: absent.textproto\n`, "2:7", "task", /cannot read absent\.textproto/],
  ["an invalid task file", `family: x\ntask: bad.textproto\n`, "2:7", "task", /the task file does not load: .*bad\.textproto:\d+:/],
  ["an absolute task path", `family: x\ntask: /etc/passwd\n`, "2:7", "task", /absolute path/],
  ["a family as the task", `family: x\ntask: other.family.yaml\n`, "2:7", "task", /cannot run another family/],
  ["an unknown generator", `${HEAD}params:\n  a: { pick: [1, 2] }\n`, "4:8", "params.a.pick", /unknown key 'pick'.*kinds: choice, int/],
  ["two generators", `${HEAD}params:\n  a: { const: 1, int: { min: 1, max: 2 } }\n`, "4:6", "params.a", /has 2 kinds/],
  ["a bad parameter name", `${HEAD}params:\n  Abc: { const: 1 }\n`, "4:3", "params.Abc", /not a parameter name/],
  ["an empty choice", `${HEAD}params:\n  a: { choice: [] }\n`, "4:16", "params.a.choice", /must not be empty/],
  ["a null choice", `${HEAD}params:\n  a: { choice: [x, null] }\n`, "4:20", "params.a.choice[1]", /without a value/],
  ["int max below min", `${HEAD}params:\n  a: { int: { min: 5, max: 2 } }\n`, "4:28", "params.a.int.max", /below min/],
  ["int not an integer", `${HEAD}params:\n  a: { int: { min: 1.5, max: 2 } }\n`, "4:20", "params.a.int.min", /not an integer/],
  ["too many words", `${HEAD}params:\n  a: { words: { count: 17 } }\n`, "4:24", "params.a.words.count", /out of range/],
  ["a bad date", `${HEAD}params:\n  a: { date: { from: "2023-02-30", to: "2023-03-01" } }\n`, "4:22", "params.a.date.from", /not a date/],
  ["a bad date directive", `${HEAD}params:\n  a: { date: { from: "2023-02-01", to: "2023-03-01", format: "%Y/%q" } }\n`, "4:66", "params.a.date.format", /%q is not a supported directive/],
  ["a parameter used before it is declared", `${HEAD}params:\n  a: { format: "x{b}" }\n  b: { const: 1 }\n`, "4:18", "params.a.format", /\{b\} is used before it is declared \(line 5\)/],
  ["a map of a later parameter", `${HEAD}params:\n  a: { map: { param: b, values: { x: 1 } } }\n  b: { const: x }\n`, "4:22", "params.a.map.param", /'b' is used before it is declared/],
  ["a map key twice, as a number and as text", `${HEAD}params:\n  s: { const: 1 }\n  v: { map: { param: s, values: { 1: a, "1": b } } }\n`, "5:41", "params.v.map.values.1", /'1' is written twice/],
  ["a map missing a choice's value", `${HEAD}params:\n  s: { choice: [on, off] }\n  v: { map: { param: s, values: { on: 1 } } }\n`, "5:33", "params.v.map.values", /no entry for 'off'/],
  ["an unknown {name} in the goal", `${HEAD}goal: "Turn it {stat}"\nparams:\n  state: { choice: [a] }\n`, "3:16", "goal", /\{stat\} names no parameter.*declared: state/],
  ["a non-parameter {Name}", `${HEAD}goal: "Turn it {State}"\n`, "3:16", "goal", /not a parameter name/],
  ["{name} in sql.query", `${HEAD}params:\n  t: { const: a }\nchecks:\n  items:\n    - sql: { db: /data/x.db, query: "SELECT 1 WHERE a = {t}" }\n      equals: "1"\n`, "7:57", "checks.items[0].sql.query", /bound, never substituted.*write :t/],
  ["an unknown :name in sql.query", `${HEAD}checks:\n  items:\n    - sql: { db: /data/x.db, query: "SELECT 1 WHERE a = :t" }\n      equals: "1"\n`, "5:57", "checks.items[0].sql.query", /:t names no parameter/],
  ["a bad regex", `${HEAD}checks:\n  items:\n    - shell: "echo"\n      regex: "(a"\n`, "6:14", "checks.items[0].regex", /regex "\(a"/],
  ["a backtracking regex", `${HEAD}checks:\n  items:\n    - shell: "echo"\n      regex: "(a)\\\\1"\n`, "6:14", "checks.items[0].regex", /back-?reference/i],
  ["a check without a comparison", `${HEAD}checks:\n  items:\n    - shell: "echo"\n`, "5:7", "checks.items[0]", /a check without a comparison/],
  ["a check without a source", `${HEAD}checks:\n  items:\n    - equals: "1"\n`, "5:7", "checks.items[0]", /a check without a source/],
  ["exists on a setting", `${HEAD}checks:\n  items:\n    - setting: { namespace: global, key: k }\n      exists: true\n`, "6:7", "checks.items[0].exists", /a setting check cannot compare exists/],
  ["equals on a tree", `${HEAD}checks:\n  items:\n    - tree: { text: a }\n      equals: a\n`, "6:7", "checks.items[0].equals", /compares exists only/],
  ["a bad namespace", `${HEAD}checks:\n  items:\n    - setting: { namespace: local, key: k }\n      equals: "1"\n`, "5:29", "checks.items[0].setting.namespace", /not one of global, secure, system/],
  ["a bad json path", `${HEAD}checks:\n  items:\n    - answer: {}\n      json: { path: "a.b", equals: x }\n`, "6:21", "checks.items[0].json.path", /not a JSON path/],
  ["a bad number op", `${HEAD}checks:\n  items:\n    - answer: {}\n      number: { op: "=", value: 1 }\n`, "6:21", "checks.items[0].number.op", /not one of ==/],
  ["a relative device path", `${HEAD}setup:\n  - file: { path: notes.txt, content: x }\n`, "4:19", "setup[0].file.path", /not an absolute device path/],
  ["a step doing two things", `${HEAD}setup:\n  - shell: a\n    sleep: 1\n`, "4:5", "setup[0]", /a step does one thing/],
  ["an alias", `${HEAD}params:\n  a: &x { const: 1 }\n  b: *x\n`, "5:6", "params.b", /aliases/],
  ["a tag", `${HEAD}goal: !!binary aGVsbG8=\n`, "3:16", "goal", /tags/],
  ["params beside a task_server", `${HEAD}task_server: { url: "http://h:1", class: C }\nparams:\n  a: { const: 1 }\n`, "4:1", "params", /gets its parameters/],
  ["a task server URL with credentials", `${HEAD}task_server: { url: "http://u:p@h:1", class: C }\n`, "3:21", "task_server.url", /user:password/],
  ["a control character", `${HEAD}goal: "a\\u0007b"\n`, "3:7", "goal", /control character U\+0007/],
];

test("bad families: each error at its file:line:column, with the field and what to do", () => {
  writeFileSync(join(dir, "bad.textproto"), "id: \n");
  const wrong: string[] = [];
  for (const [what, text, at, field, message] of BAD) {
    const e = loadError(text);
    if (`${e.line}:${e.column}` !== at || e.field !== field || !message.test(formatTaskError(e))) wrong.push(`${what}: ${formatTaskError(e)}`);
  }
  assert.deepEqual(wrong, []);
  for (const [what, text] of BAD) assert.ok(loadError(text).hint.length > 0, what);
});

test("bounds: parameters, choices, checks, set-up steps, template length, nesting, file size", () => {
  const params = Array.from({ length: FAMILY_LIMITS.maxParams + 1 }, (_, i) => `  p${i}: { const: ${i} }`).join("\n");
  assert.match(loadError(`${HEAD}params:\n${params}\n`).detail, /more than 64 entries/);
  const choices = Array.from({ length: FAMILY_LIMITS.maxChoices + 1 }, (_, i) => i).join(", ");
  assert.match(loadError(`${HEAD}params:\n  a: { choice: [${choices}] }\n`).detail, /more than 1000 items/);
  const checks = Array.from({ length: FAMILY_LIMITS.maxChecks + 1 }, () => `    - answer: {}\n      equals: x`).join("\n");
  assert.match(loadError(`${HEAD}checks:\n  items:\n${checks}\n`).detail, /more than 64 items/);
  const steps = Array.from({ length: FAMILY_LIMITS.maxSetupSteps + 1 }, () => `  - sleep: 0`).join("\n");
  assert.match(loadError(`${HEAD}setup:\n${steps}\n`).detail, /more than 64 items/);
  const e = loadError(`${HEAD}goal: "${"x".repeat(FAMILY_LIMITS.maxGoalChars + 1)}"\n`);
  assert.equal(e.code, "out_of_range");
  assert.match(e.detail, /2001 characters; at most 2000/);
  assert.equal(loadError(`${HEAD}params:\n  a: ${"[".repeat(40)}${"]".repeat(40)}\n`).code, "too_deep");
  assert.equal(loadError(`${HEAD}goal: "${"x".repeat(FAMILY_LIMITS.maxFileBytes)}"\n`).code, "too_large");
  // Deep flow nesting the YAML parser itself refuses or we do: an error either way, never a crash.
  assert.ok(loadError(`${HEAD}params: ${"[".repeat(50_000)}\n`) instanceof TaskLoadError);
});
