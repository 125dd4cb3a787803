/**
 * Hostile task files: every case ends in a clear `file:line: field: message` error (or loads, when it is valid),
 * within a deadline, with control characters escaped; nothing crashes, hangs or escapes the APK folders.
 * Hand-written cases first, then property-based ones (fast-check).
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import fc from "fast-check";
import { formatTaskError, loadTaskFile, loadTaskSet, parseTaskText, TASK_LIMITS, TaskLoadError, type LoadedTask } from "../src/index.ts";

const dir = mkdtempSync(join(tmpdir(), "farm-hostile-tasks-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const FILE = join(dir, "t.textproto");
const RAW_CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** Loads `text` (or throws a non-TaskLoadError, failing the test); checks the message is one safe line. */
function outcome(text: string, file = FILE, apkDirs: string[] = []): LoadedTask | TaskLoadError {
  try {
    return parseTaskText(text, { sourcePath: file, apkDirs });
  } catch (e) {
    if (!(e instanceof TaskLoadError)) throw e;
    assert.ok(!RAW_CONTROL.test(formatTaskError(e)), `raw control character in ${JSON.stringify(formatTaskError(e))}`);
    assert.ok(e.line >= 1);
    return e;
  }
}

function rejected(text: string, code: string, line?: number, field?: string | RegExp, apkDirs: string[] = []): TaskLoadError {
  const r = outcome(text, FILE, apkDirs);
  assert.ok(r instanceof TaskLoadError, `expected ${code}, but it loaded: ${text.slice(0, 200)}`);
  assert.equal(r.code, code, formatTaskError(r));
  if (line !== undefined) assert.equal(r.line, line, formatTaskError(r));
  if (typeof field === "string") assert.equal(r.field, field, formatTaskError(r));
  else if (field) assert.match(r.field, field, formatTaskError(r));
  return r;
}

const base = (...lines: string[]): string => ['id: "t"', ...lines].join("\n");
const resetStep = (check: string): string => base("reset_steps {", `  success_condition { ${check} }`, "}");

// ---------------------------------------------------------------- files that are not task files

test("special files are refused without blocking: FIFO, device, socket, folder", { timeout: 20_000 }, async () => {
  const fifo = join(dir, "fifo.textproto");
  execFileSync("mkfifo", [fifo]);
  const e1 = assertLoadError(() => loadTaskFile(fifo));
  assert.equal(e1.code, "not_a_file");
  assert.match(formatTaskError(e1), /FIFO, not a regular file/);
  assert.equal(assertLoadError(() => loadTaskFile("/dev/zero")).code, "not_a_file");
  const sock = join(dir, "sock.textproto");
  const server = createServer().listen(sock);
  await new Promise((r) => server.once("listening", r));
  assert.equal(assertLoadError(() => loadTaskFile(sock)).code, "read_failed"); // open() itself refuses a socket
  server.close();
  const folder = join(dir, "folder.textproto");
  mkdirSync(folder);
  assert.equal(assertLoadError(() => loadTaskFile(folder)).code, "not_a_file");
  // A folder walk that meets the FIFO reports it as one invalid file and goes on.
  writeFileSync(join(dir, "good.textproto"), 'id: "good"\n');
  const set = loadTaskSet([dir]);
  assert.ok(set.tasks.some((t) => t.task.id === "good"));
  assert.ok(set.errors.some((e) => e.code === "not_a_file" && e.file === fifo));
});

function assertLoadError(fn: () => unknown): TaskLoadError {
  try {
    fn();
  } catch (e) {
    if (e instanceof TaskLoadError) return e;
    throw e;
  }
  throw new Error("expected a TaskLoadError");
}

test("size, emptiness, encoding", { timeout: 30_000 }, () => {
  const big = join(dir, "big.textproto");
  writeFileSync(big, `id: "big"\ndescription: "${"x".repeat(TASK_LIMITS.maxFileBytes)}"\n`);
  assert.equal(assertLoadError(() => loadTaskFile(big)).code, "too_large");
  rejected(`id: "a"\ndescription: "${"A".repeat(3_000_000)}"`, "too_large", 1); // a multi-megabyte string
  rejected(`id: "a"\ndescription: "${"x".repeat(TASK_LIMITS.maxStringChars + 1)}"`, "too_large", 2, "description");
  rejected(`id: "a"\nsetup_steps { adb_request { install_apk { blob { contents: "${"\\x41".repeat(300_000)}" } } } }`, "too_large", 1);
  for (const empty of ["", "\n\n", "   \t\n", "# only a comment\n", "# a\n# b\n\n"]) rejected(empty, "empty_file", 1);
  const latin1 = join(dir, "latin1.textproto");
  writeFileSync(latin1, Buffer.from([0x69, 0x64, 0x3a, 0x20, 0x22, 0xe9, 0x22, 0x0a]));
  assert.equal(assertLoadError(() => loadTaskFile(latin1)).code, "bad_text");
});

test("nesting depth is bounded before any recursive parser runs", { timeout: 30_000 }, () => {
  rejected(`id: "a"\nreset_steps ${"{ x ".repeat(100_000)}`, "too_deep", 2);
  rejected(`id: "a"\nextras_spec ${"[".repeat(50_000)}`, "too_deep", 2);
  rejected(`id: "a"\n${"<".repeat(40)}`, "too_deep", 2);
});

// ---------------------------------------------------------------- numbers

test("numbers are checked against their field's range, at their own line", { timeout: 30_000 }, () => {
  for (const v of ["nan", "inf", "-inf", "1e18", "86401", "-1"]) rejected(base("", `max_episode_sec: ${v}`), "out_of_range", 3, "max_episode_sec");
  for (const v of ["-1", "10000001"]) rejected(base("", `max_episode_steps: ${v}`), "out_of_range", 3, "max_episode_steps");
  rejected(base("", "", "max_episode_steps: 99999999999"), "syntax", 4, "max_episode_steps"); // beyond int32: its own line, not line 1
  rejected(base("max_episode_sec: 10", "max_episode_steps: 4294967296"), "syntax", 3, "max_episode_steps");
  for (const v of ["nan", "inf", "1e9"]) rejected(resetStep(`check_install { package_name: "com.a.b" timeout_sec: ${v} }`), "out_of_range", 3);
  rejected(base("reset_steps {", "  success_condition {", "    num_retries: -3", '    check_install { package_name: "com.a.b" timeout_sec: 5 }', "  }", "}"), "out_of_range", 4, "reset_steps[0].success_condition.num_retries");
  rejected(base("reset_steps {", "  success_condition {", "    num_retries: 1000000", '    check_install { package_name: "com.a.b" timeout_sec: 5 }', "  }", "}"), "out_of_range", 4);
  for (const v of ["nan", "inf", "1e18"]) rejected(base(`setup_steps { sleep { time_sec: ${v} } }`), "out_of_range", 2, "setup_steps[0].sleep.time_sec");
  rejected(base("setup_steps { adb_request { timeout_sec: inf force_stop { package_name: \"com.a.b\" } } }"), "out_of_range", 2);
  rejected(base("setup_steps { adb_request { dumpsys { timeout_ms: 2000000000 } } }"), "out_of_range", 2);
  rejected(base("setup_steps { adb_request { tap { x: 1 y: 2000000 } } }"), "out_of_range", 2);
  rejected(base("log_parsing_config { log_regexps { reward_event { event: \"x\" reward: inf } } }"), "out_of_range", 2);
  rejected(base("log_parsing_config { log_regexps { reward_event { event: \"x\" reward: 1e300 } } }"), "out_of_range", 2);
});

test("extras shapes: no zero, negative or huge dimensions, bounded element count and rank", () => {
  const spec = (shape: string) => base(`extras_spec { name: "e" dtype: INT32 shape: ${shape} }`);
  rejected(spec("[0]"), "bad_shape");
  rejected(spec("[4, 0]"), "bad_shape");
  rejected(spec("[-1]"), "bad_shape");
  rejected(spec("[1000000000]"), "bad_shape");
  rejected(spec("[65536, 2]"), "bad_shape");
  rejected(spec("[1000, 1000, 1000]"), "bad_shape");
  rejected(spec("[1, 1, 1, 1, 1, 1, 1, 1, 1]"), "bad_shape");
  const ok = outcome(spec("[256, 256]"));
  assert.ok(!(ok instanceof TaskLoadError));
});

// ---------------------------------------------------------------- text

test("NUL, control and bidi characters: refused where they make no sense, escaped in messages", () => {
  rejected(`id: "a"\ndescription: "x\u0000y"`, "bad_text", 2); // raw NUL
  rejected(`id: "a"\n# comment \u202e hidden\n`, "bad_text", 2); // Trojan Source in a comment
  rejected('id: "a\\x00b"', "bad_text", 1, "id");
  rejected('id: "a\\x1b[31m"', "bad_text", 1, "id");
  rejected(base('name: "evil\\u202eexe.txt"'), "bad_text", 2, "name");
  rejected(base('setup_steps { adb_request { input_text { text: "hi\\nthere" } } }'), "bad_text", 2);
  rejected(base('setup_steps { adb_request { generic { args: ["shell", "echo\\x07"] } } }'), "bad_text", 2);
  rejected(base('name: "a\\u0085b"'), "bad_text", 2);
  rejected(base('name: "ok"', 'package_name: "com.a\\x85b"'), "bad_text", 3, "package_name"); // not UTF-8: at its line
  const e = rejected(base('setup_steps { adb_request { input_text { text: "\\x1b]0;pwned\\x07" } } }'), "bad_text");
  assert.match(formatTaskError(e), /\\u001b\]0;pwned\\u0007/);
  // A description may hold newlines and tabs (prose), but not terminal escapes.
  assert.ok(!(outcome(base('description: "line one\\n\\tline two"')) instanceof TaskLoadError));
  rejected(base('description: "\\x1b[2J"'), "bad_text", 2, "description");
});

test("ids are path-safe, whether written or taken from the file name", () => {
  for (const id of ["../etc/passwd", "a/b", "a\\\\b", ".hidden", "", " x", "x y", "é", "a".repeat(129), "-x"]) {
    const r = outcome(`id: "${id}"`);
    if (id === "") {
      assert.ok(!(r instanceof TaskLoadError)); // derived from the file name "t"
      continue;
    }
    assert.ok(r instanceof TaskLoadError && (r.code === "bad_id" || r.code === "bad_text"), `${id}: ${r instanceof TaskLoadError ? formatTaskError(r) : "loaded"}`);
  }
  const r = outcome('name: "x"', join(dir, "has space.textproto"));
  assert.ok(r instanceof TaskLoadError && r.code === "bad_id", "a file name that is no id");
  assert.ok(!(outcome(`id: "${"a".repeat(128)}"`) instanceof TaskLoadError));
});

// ---------------------------------------------------------------- APK paths

test("install paths stay inside the task's folder and the APK folders", () => {
  const apkDir = join(dir, "apks");
  mkdirSync(apkDir, { recursive: true });
  writeFileSync(join(apkDir, "good.apk"), "x");
  writeFileSync(join(dir, "outside.apk"), "x");
  symlinkSync(join(dir, "outside.apk"), join(apkDir, "link.apk"));
  symlinkSync("/etc/passwd", join(apkDir, "passwd.apk"));
  const install = (p: string) => base(`setup_steps { adb_request { install_apk { filesystem { path: "${p}" } } } }`);
  const taskFile = join(apkDir, "task.textproto");
  const load = (p: string) => {
    try {
      return parseTaskText(install(p), { sourcePath: taskFile, apkDirs: [apkDir] });
    } catch (e) {
      if (e instanceof TaskLoadError) return e;
      throw e;
    }
  };
  for (const bad of ["../outside.apk", "/etc/passwd", "sub/../../outside.apk", "..\\\\outside.apk", "C:/x.apk", "passwd.apk"]) {
    const r = load(bad);
    assert.ok(r instanceof TaskLoadError && r.code === "bad_apk", `${bad}: ${r instanceof TaskLoadError ? formatTaskError(r) : "loaded"}`);
    assert.equal(r.line, 2);
  }
  // A symlink to a file in the task's folder tree but outside the APK folder that holds it.
  const linked = load("link.apk");
  assert.ok(linked instanceof TaskLoadError && /symlink/.test(linked.detail), String(linked));
  const good = load("good.apk");
  assert.ok(!(good instanceof TaskLoadError), String(good));
  const mpm = outcome(['id: "m"', 'package_name: "com.a.b"', 'setup_steps { adb_call { install_apk { mpm { path: "../../x.apk" } } } }'].join("\n"));
  assert.ok(mpm instanceof TaskLoadError && mpm.code === "bad_apk");
});

// ---------------------------------------------------------------- regexes

test("log regexes: catastrophic ones load (the engine is linear), unsupported ones are named at their line", () => {
  const regexps = (r: string) => base("log_parsing_config {", "  log_regexps {", `    reward: "${r}"`, "  }", "}");
  assert.ok(!(outcome(regexps("(a+)+$")) instanceof TaskLoadError));
  assert.ok(!(outcome(regexps("(.*a){20}")) instanceof TaskLoadError));
  const backref = rejected(regexps("(a)\\\\1"), "bad_regex", 4);
  assert.match(backref.detail, /backreference/);
  assert.match(rejected(regexps("(?=x)"), "bad_regex", 4).detail, /lookahead/);
  assert.match(rejected(regexps("a{5000}"), "bad_regex", 4).detail, /above 1000/);
  rejected(regexps("x".repeat(1001)), "bad_regex", 4);
});

// ---------------------------------------------------------------- property-based

const VALID = [
  'id: "p"',
  'name: "Property"',
  "max_episode_sec: 60",
  "max_episode_steps: 100",
  "reset_steps {",
  '  adb_request { force_stop { package_name: "com.example.app" } }',
  "  success_condition { num_retries: 2 check_install { package_name: \"com.example.app\" timeout_sec: 5 } }",
  "}",
  "extras_spec { name: \"grid\" dtype: INT32 shape: [4, 4] }",
  "log_parsing_config { log_regexps { reward: \"^[Rr]eward: ([-+]?[0-9]*\\\\.?[0-9]*)$\" } }",
].join("\n");

/** Runs a property; every case must end in a load or a clear TaskLoadError within the deadline. */
function total(text: string): LoadedTask | TaskLoadError {
  const t0 = performance.now();
  const r = outcome(text);
  assert.ok(performance.now() - t0 < 5000, "a single file took over 5 s");
  return r;
}

test("property: arbitrary text never crashes the loader", { timeout: 120_000 }, () => {
  fc.assert(fc.property(fc.string({ unit: "binary", maxLength: 300 }), (s) => void total(s)), { numRuns: 150 });
  fc.assert(fc.property(fc.string({ unit: fc.constantFrom(..."{}<>[]:;,\"'#\\-\n abcxyz019.eE"), maxLength: 200 }), (s) => void total(s)), { numRuns: 150 });
});

test("property: a valid task with random garbage spliced in loads or fails clearly", { timeout: 120_000 }, () => {
  fc.assert(
    fc.property(fc.nat(VALID.length), fc.string({ unit: "binary", maxLength: 20 }), (at, junk) => void total(VALID.slice(0, at) + junk + VALID.slice(at))),
    { numRuns: 150 },
  );
});

test("property: every number written in a numeric field is checked, at its line", { timeout: 120_000 }, () => {
  const field = fc.constantFrom("max_episode_sec", "max_episode_steps");
  const value = fc.oneof(fc.double(), fc.integer({ min: -2_147_483_648, max: 2_147_483_647 }), fc.constantFrom("nan", "inf", "-inf", "1e18", "-0"));
  fc.assert(
    fc.property(field, value, (name, v) => {
      const written = typeof v === "number" ? (Number.isNaN(v) ? "nan" : v === Infinity ? "inf" : v === -Infinity ? "-inf" : String(v)) : v;
      const isInt = name === "max_episode_steps";
      const n = Number(written.replace(/^-?inf$/, (m) => (m.startsWith("-") ? "-Infinity" : "Infinity")).replace("nan", "NaN"));
      const r = total(base("", `${name}: ${written}`));
      const max = isInt ? TASK_LIMITS.maxEpisodeSteps : TASK_LIMITS.maxDurationSec;
      const valid = Number.isFinite(n) && n >= 0 && n <= max && (!isInt || /^-?\d+$/.test(written));
      if (valid) assert.ok(!(r instanceof TaskLoadError), `${name}: ${written} should load: ${r instanceof TaskLoadError ? formatTaskError(r) : ""}`);
      else {
        assert.ok(r instanceof TaskLoadError, `${name}: ${written} should be refused`);
        assert.equal(r.line, 3, formatTaskError(r));
      }
    }),
    { numRuns: 200 },
  );
});

test("property: ids load exactly when they are path-safe", { timeout: 60_000 }, () => {
  fc.assert(
    fc.property(fc.string({ unit: "grapheme-ascii", maxLength: 140 }), (id) => {
      const r = total(`id: ${JSON.stringify(id)}`);
      const safe = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/.test(id) || id === "";
      assert.equal(!(r instanceof TaskLoadError), safe, `${JSON.stringify(id)}: ${r instanceof TaskLoadError ? formatTaskError(r) : "loaded"}`);
    }),
    { numRuns: 200 },
  );
});

test("property: strings with control or bidi characters are refused in one-line fields", { timeout: 60_000 }, () => {
  const evil = fc.constantFrom("\\x00", "\\x1b", "\\x07", "\\x7f", "\\u0085", "\\u009b", "\\u202e", "\\u2066", "\\n", "\\r", "\\t");
  fc.assert(
    fc.property(fc.constantFrom("name", "package_name"), fc.stringMatching(/^[a-z]{0,8}$/), evil, fc.stringMatching(/^[a-z]{0,8}$/), (field, a, bad, b) => {
      const r = total(base(`${field}: "${a}${bad}${b}"`));
      assert.ok(r instanceof TaskLoadError && r.line === 2, `${field} with ${bad}: ${r instanceof TaskLoadError ? formatTaskError(r) : "loaded"}`);
    }),
    { numRuns: 150 },
  );
});
