/**
 * Task families (FAMILIES.md): a `*.family.yaml` read with the `yaml` library (positions from its LineCounter),
 * checked field by field into a `TaskFamily`, and loaded as the AndroidEnv task it refers to with the family's id.
 * Every error is a TaskLoadError at `file:line:column` with the field path (`params.state.choice[1]`,
 * `checks.items[0].regex`), what is wrong and what to do. Nothing of the file is evaluated: aliases and tags are
 * refused, every list and text is bounded, templates are checked against the declared parameters.
 */
import { createHash } from "node:crypto";
import { dirname, isAbsolute, resolve } from "node:path";
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, type Node, type Scalar, type YAMLMap } from "yaml";
import { coerceError } from "@farm/errors";
import { formatTaskError, TaskLoadError, type TaskErrorCode } from "./errors.ts";
import { canonicalJson } from "./hash.ts";
import { ALWAYS_FORBIDDEN, CONTROL, FAMILY_LIMITS, PARAM_NAME_PATTERN, TASK_ID_PATTERN, TASK_LIMITS } from "./limits.ts";
import type {
  CheckSource,
  CheckSpec,
  Comparison,
  FamilyChecks,
  FamilySetupStep,
  LoadedTask,
  NumberOp,
  ParamDecl,
  ParamSpec,
  ParamValue,
  PyRegex,
  SettingsNamespace,
  TaskFamily,
  TaskServerRef,
  Template,
} from "./model.ts";
import { pyRegex } from "./pyregex.ts";

/** The file name suffix of a task family. */
export const FAMILY_SUFFIX = ".family.yaml";

export function isFamilyPath(path: string): boolean {
  return path.endsWith(FAMILY_SUFFIX);
}

/** How a family loads the task it refers to (load.ts's loader, passed in so the two files need not import each other). */
export type LoadReferencedTask = (path: string) => LoadedTask;

const L = FAMILY_LIMITS;
const PARAM_KINDS = ["choice", "int", "number", "words", "text", "date", "map", "const", "format"] as const;
const SOURCES = ["shell", "setting", "file", "sql", "tree", "activity", "answer"] as const;
const COMPARISONS = ["equals", "not_equals", "regex", "number", "json", "exists", "fuzzy"] as const;
const NAMESPACES: readonly SettingsNamespace[] = ["global", "secure", "system"];
const NUMBER_OPS: readonly NumberOp[] = ["==", "!=", "<", "<=", ">", ">="];
/** strftime directives a `date` parameter's format may use (FAMILIES.md). */
const DATE_DIRECTIVES = new Set(["Y", "m", "d", "B", "b", "A", "a", "e", "%"]);
/** A `{word}` in a template: a placeholder when the word is a parameter name. */
const BRACED = /\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const JSON_PATH = /^\$(?:\.[A-Za-z_][A-Za-z0-9_]*|\[(?:[0-9]{1,9}|"[^"\\]{0,256}"|'[^'\\]{0,256}')\])*$/;
const CLASS_NAME = /^[A-Za-z_][A-Za-z0-9_.]{0,127}$/;
const DATE = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/;

interface Entry {
  key: Scalar;
  value: Node | null;
}

/** Where names are visible: declared parameters by name → the line they are declared at and their order. */
interface Scope {
  declared: ReadonlyMap<string, { line: number; order: number }>;
  /** Inside `params`: the order of the parameter being read (only earlier ones may be used). */
  before?: number;
}

class FamilyReader {
  constructor(
    readonly file: string,
    private readonly source: string,
    private readonly lc: LineCounter,
  ) {}

  pos(offset: number): { line: number; col: number } {
    return this.lc.linePos(offset);
  }

  fail(at: Node | number | null | undefined, field: string, detail: string, hint: string, code: TaskErrorCode = "bad_value"): never {
    const offset = typeof at === "number" ? at : (at?.range?.[0] ?? 0);
    const { line, col } = this.pos(offset);
    throw new TaskLoadError(code, this.file, line, field, detail, hint, col);
  }

  /** Offset of character `index` of a scalar's value in the file, when the value is written as is (else the scalar's start). */
  offsetIn(node: Scalar, index: number): number {
    const [start, end] = node.range ?? [0, 0];
    const source = this.source.slice(start, end);
    const q = node.type === "QUOTE_DOUBLE" || node.type === "QUOTE_SINGLE" ? 1 : 0;
    const value = String(node.value);
    return source.slice(q, q + value.length) === value ? start + q + index : start;
  }

  plain(node: Node | null, field: string): void {
    if (node === null) return;
    if (isAlias(node)) this.fail(node, field, "YAML aliases (*name) are not used in family files", "write the value out");
    if (node.tag !== undefined && node.tag !== null) this.fail(node, field, `YAML tags (${node.tag}) are not used in family files`, "remove the tag; values are strings, numbers or booleans");
  }

  map(node: Node | null, field: string, allowed: readonly string[], what = field): Map<string, Entry> {
    this.plain(node, field);
    if (!isMap(node)) this.fail(node, field, `must be a map (${allowed.join(", ")})`, `write ${what} as key: value lines or { key: value }`);
    const out = new Map<string, Entry>();
    for (const pair of (node as YAMLMap).items) {
      const key = pair.key as Node | null;
      this.plain(key, field);
      if (!isScalar(key) || typeof key.value !== "string") this.fail(key ?? node, field, "a key must be a plain name", `use one of: ${allowed.join(", ")}`, "unknown_field");
      const name = key.value as string;
      if (!allowed.includes(name)) this.fail(key, `${field ? `${field}.` : ""}${shortText(name)}`, `unknown key '${shortText(name)}'`, `remove it or fix its spelling; ${what} has: ${allowed.join(", ")}`, "unknown_field");
      const value = nullToNull(pair.value as Node | null);
      this.plain(value, `${field ? `${field}.` : ""}${name}`);
      out.set(name, { key, value });
    }
    return out;
  }

  /** A map whose keys are data (parameter names, map keys): checked against `pattern`, at most `max`. */
  dataMap(node: Node | null, field: string, max: number, keyOk: (k: string) => string | undefined): Entry[] {
    this.plain(node, field);
    if (!isMap(node)) this.fail(node, field, "must be a map", "write key: value lines or { key: value }");
    const items = (node as YAMLMap).items;
    if (items.length > max) this.fail(items[max]!.key as Node, field, `more than ${max} entries`, `keep at most ${max}`, "out_of_range");
    const seen = new Set<string>();
    return items.map((pair) => {
      const key = pair.key as Node | null;
      this.plain(key, field);
      if (!isScalar(key) || key.value === null || typeof key.value === "object") this.fail(key ?? node, field, "a key must be a string or a number", "write a plain key");
      const k = scalarText(key as Scalar, this.source);
      if (seen.has(k)) this.fail(key, `${field}.${shortText(k)}`, `'${shortText(k)}' is written twice`, "keep one", "syntax");
      seen.add(k);
      const problem = keyOk(k);
      if (problem) this.fail(key, `${field}.${shortText(k)}`, problem, "see FAMILIES.md", "bad_param");
      const value = nullToNull(pair.value as Node | null);
      this.plain(value, `${field}.${k}`);
      return { key: key as Scalar, value };
    });
  }

  seq(node: Node | null, field: string, min: number, max: number): Node[] {
    this.plain(node, field);
    if (!isSeq(node)) this.fail(node, field, "must be a list", "write - item lines or [a, b]");
    const items = (node.items as (Node | null)[]).map((raw, i) => {
      const n = nullToNull(raw);
      this.plain(n, `${field}[${i}]`);
      if (n === null) this.fail(raw ?? node, `${field}[${i}]`, "a list item without a value (null)", "remove it or give it a value");
      return n;
    });
    if (items.length < min) this.fail(node, field, min === 1 ? "must not be empty" : `needs at least ${min} items`, "add items");
    if (items.length > max) this.fail(items[max]!, field, `more than ${max} items`, `keep at most ${max}`, "out_of_range");
    return items;
  }

  required(m: Map<string, Entry>, key: string, parent: Node | null, field: string, hint: string): Node {
    const e = m.get(key);
    if (!e) this.fail(parent, field, `${key}: missing`, hint);
    if (e.value === null) this.fail(e.key, `${field ? `${field}.` : ""}${key}`, "has no value", hint);
    return e.value;
  }

  /** Text as written: strings, and numbers or booleans as their source (`1.0` stays "1.0"). */
  text(node: Node | null, field: string, max: number, opts: { empty?: boolean; newlines?: boolean } = {}): string {
    if (!isScalar(node) || node.value === null || typeof node.value === "object") this.fail(node, field, "must be text", 'write a string, e.g. "on"');
    const s = scalarText(node, this.source);
    if (!opts.empty && s === "") this.fail(node, field, "must not be empty", "give it a value");
    if (s.length > max) this.fail(node, field, `${s.length} characters; at most ${max}`, "shorten it", "out_of_range");
    const bad = (opts.newlines ? CONTROL : /[\u0000-\u001f\u007f-\u009f]/).exec(s) ?? ALWAYS_FORBIDDEN.exec(s);
    if (bad) this.fail(this.offsetIn(node, bad.index), field, `contains the control character U+${bad[0].charCodeAt(0).toString(16).padStart(4, "0").toUpperCase()}`, opts.newlines ? "only tab and newline are allowed" : "write it on one line without control characters", "bad_text");
    return s;
  }

  number(node: Node | null, field: string, min: number, max: number, integer = false): number {
    if (!isScalar(node) || typeof node.value !== "number" || !Number.isFinite(node.value)) this.fail(node, field, "must be a number", integer ? `write an integer ${min} … ${max}` : `write a number ${min} … ${max}`);
    const v = node.value as number;
    if (integer && !Number.isInteger(v)) this.fail(node, field, `${v} is not an integer`, `write an integer ${min} … ${max}`);
    if (v < min || v > max) this.fail(node, field, `${v} is out of range`, `use ${min} … ${max}`, "out_of_range");
    return v;
  }

  bool(node: Node | null, field: string): boolean {
    if (!isScalar(node) || typeof node.value !== "boolean") this.fail(node, field, "must be true or false", "write true or false");
    return node.value as boolean;
  }

  oneOf<T extends string>(node: Node | null, field: string, values: readonly T[]): T {
    const s = this.text(node, field, 64);
    if (!(values as readonly string[]).includes(s)) this.fail(node, field, `'${shortText(s)}' is not one of ${values.join(", ")}`, `use one of ${values.join(", ")}`);
    return s as T;
  }

  /** A parameter value written in the file: a string, number or boolean (never null), bounded. */
  value(node: Node | null, field: string): ParamValue {
    if (!isScalar(node) || node.value === null || typeof node.value === "object") this.fail(node, field, "must be a string, number or boolean", 'write a scalar such as "on", 3 or true');
    const v = node.value as ParamValue;
    if (typeof v === "number" && (!Number.isFinite(v) || Math.abs(v) > L.maxAbsNumber)) this.fail(node, field, `${v} is not a finite number within ±${L.maxAbsNumber}`, "use a smaller number or quote it", "out_of_range");
    if (typeof v === "string") this.text(node, field, L.maxParamValueChars, { empty: true });
    return v;
  }

  /** A template: its `{name}` placeholders must name parameters in scope. */
  template(node: Node | null, field: string, scope: Scope, max: number = L.maxTemplateChars, opts: { empty?: boolean; newlines?: boolean } = {}): Template {
    const text = this.text(node, field, max, { newlines: true, ...opts });
    const scalar = node as Scalar;
    for (const m of text.matchAll(BRACED)) {
      const name = m[1];
      if (name === undefined) continue;
      const at = this.offsetIn(scalar, m.index);
      if (!PARAM_NAME_PATTERN.test(name)) this.fail(at, field, `{${shortText(name)}} is not a parameter name (lower case letters, digits and _, starting with a letter)`, "rename the parameter, or write {{ and }} for literal braces", "bad_template");
      this.inScope(at, field, name, scope, `{${name}}`);
    }
    return { text, line: this.pos(scalar.range![0]).line };
  }

  inScope(at: number, field: string, name: string, scope: Scope, written: string): void {
    const d = scope.declared.get(name);
    const known = [...scope.declared.keys()].filter((n) => scope.before === undefined || scope.declared.get(n)!.order < scope.before);
    if (!d) this.fail(at, field, `${written} names no parameter`, known.length ? `declared: ${known.join(", ")}` : "declare it under params:", "bad_template");
    if (scope.before !== undefined && d.order >= scope.before) this.fail(at, field, `${written} is used before it is declared (line ${d.line})`, "declare it above the parameter that uses it", "bad_template");
  }
}

/** `key:` with nothing (or `null`, `~`) is no value. */
function nullToNull(node: Node | null | undefined): Node | null {
  return node === undefined || node === null || (isScalar(node) && node.value === null) ? null : node;
}

/** A scalar's text: strings as they are, numbers and booleans as written in the file. */
function scalarText(node: Scalar, text: string): string {
  if (typeof node.value === "string") return node.value;
  const [start, end] = node.range ?? [0, 0];
  const source = text.slice(start, end).trim();
  return source !== "" ? source : String(node.value);
}

function shortText(s: string): string {
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
}

/** Parses a family's text (`file` names it in errors; the task it refers to resolves against its folder). */
export function parseFamilyText(text: string, file: string, loadTask: LoadReferencedTask): LoadedTask {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > L.maxFileBytes) throw new TaskLoadError("too_large", file, 1, "", `family file of ${bytes} bytes is larger than the ${L.maxFileBytes} allowed`, "families are short; keep long texts in the task's files", 1);
  const forbidden = ALWAYS_FORBIDDEN.exec(text);
  const lc = new LineCounter();
  const r = new FamilyReader(file, text, lc);
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false, uniqueKeys: true, strict: true, version: "1.2", schema: "core", keepSourceTokens: false });
  if (forbidden) r.fail(forbidden.index, "", "the file contains a NUL or bidirectional control character", "family files are plain UTF-8 text; remove it", "bad_text");
  const problem = doc.errors[0];
  if (problem) {
    const dup = problem.code === "DUPLICATE_KEY";
    r.fail(problem.pos[0], "", dup ? "a key is written twice" : `YAML: ${problem.message.split("\n")[0]}`, dup ? "keep one" : "fix the YAML syntax here", "syntax");
  }
  if (doc.contents === null) throw new TaskLoadError("empty_file", file, 1, "", "the family file is empty", "write at least family: and task: (FAMILIES.md)", 1);
  checkDepth(r, doc.contents as Node, 0);
  const root = doc.contents as Node;
  const top = r.map(root, "", ["family", "task", "goal", "params", "setup", "checks", "task_server"], "a family");

  const idNode = r.required(top, "family", root, "", "name the family: family: my_task, 1-128 of A-Z a-z 0-9 _ . -");
  const id = r.text(idNode, "family", TASK_LIMITS.maxIdChars * 2);
  if (!TASK_ID_PATTERN.test(id)) r.fail(idNode, "family", `'${shortText(id)}' is not a task id`, "use 1-128 letters, digits, '_', '.', '-', starting with a letter or digit", "bad_id");

  const taskNode = r.required(top, "task", root, "", "name the AndroidEnv task file it runs, relative to this file: task: ../app.textproto");
  const taskRef = r.text(taskNode, "task", 1024);
  if (isAbsolute(taskRef)) r.fail(taskNode, "task", "an absolute path", "write the task file's path relative to this file (the same on every host)");
  if (isFamilyPath(taskRef)) r.fail(taskNode, "task", "a family cannot run another family", "name an AndroidEnv task file (.textproto)", "bad_family_task");
  const taskPath = resolve(dirname(resolve(file)), taskRef);
  const base = ((): LoadedTask => {
    try {
      return loadTask(taskPath);
    } catch (e) {
      if (!(e instanceof TaskLoadError)) throw e;
      const missing = e.code === "read_failed" || e.code === "not_a_file";
      return r.fail(taskNode, "task", missing ? `cannot read ${shortText(taskRef)}: ${e.detail}` : `the task file does not load: ${formatTaskError(e)}`, missing ? "check the path; it is relative to this family file" : "fix the task file", "bad_family_task");
    }
  })();

  const server = top.get("task_server");
  if (server) {
    for (const k of ["params", "setup", "checks"]) {
      const e = top.get(k);
      if (e) r.fail(e.key, k, "a family with a task_server gets its parameters, set-up and score from the server", `remove ${k}, or task_server`);
    }
  }

  const params: ParamDecl[] = [];
  const declared = new Map<string, { line: number; order: number }>();
  const paramsEntry = top.get("params");
  if (paramsEntry) {
    const entries = r.dataMap(paramsEntry.value, "params", L.maxParams, (k) => (PARAM_NAME_PATTERN.test(k) ? undefined : `'${shortText(k)}' is not a parameter name`));
    entries.forEach((e, i) => declared.set(String(e.key.value), { line: r.pos(e.key.range![0]).line, order: i }));
    entries.forEach((e, i) => params.push(readParam(r, e, { declared, before: i }, params)));
  }
  const scope: Scope = { declared };

  const goalEntry = top.get("goal");
  const goal = goalEntry ? r.template(goalEntry.value, "goal", scope, L.maxGoalChars) : undefined;

  const setup: FamilySetupStep[] = [];
  const setupEntry = top.get("setup");
  if (setupEntry) r.seq(setupEntry.value, "setup", 0, L.maxSetupSteps).forEach((n, i) => setup.push(readSetupStep(r, n, `setup[${i}]`, scope)));

  const checksEntry = top.get("checks");
  const checks = checksEntry ? readChecks(r, checksEntry.value, scope) : undefined;
  const taskServer = server ? readTaskServer(r, server.value) : undefined;

  const family: TaskFamily = {
    id,
    sourcePath: resolve(file),
    taskPath,
    ...(goal ? { goal } : {}),
    params,
    setup,
    ...(checks ? { checks } : {}),
    ...(taskServer ? { taskServer } : {}),
  };
  const taskLine = r.pos(taskNode.range![0]).line;
  const loaded: LoadedTask = {
    task: { ...base.task, id, description: goal?.text ?? base.task.description },
    hash: familyHash(family, taskRef, base.hash),
    dialect: base.dialect,
    sourcePath: resolve(file),
    warnings: base.warnings.map((w) => ({ line: taskLine, field: "task", message: `${taskRef}:${w.line}: ${w.field ? `${w.field}: ` : ""}${w.message}` })),
    family,
  };
  familyIdLines.set(loaded, r.pos(idNode.range![0]).line);
  return loaded;
}

/** The line of each loaded family's `family:` id (a task set names it when the id is taken). */
export const familyIdLines = new WeakMap<LoadedTask, number>();

/** sha256 over the family's content (paths as written, never the host's) and the hash of the task it runs. */
export function familyHash(family: TaskFamily, taskRef: string, taskHash: string): string {
  const { sourcePath: _s, taskPath: _t, params, ...rest } = family;
  // Maps become sorted [key, value] lists: their keys are data, never object keys.
  const content = {
    ...rest,
    task: taskRef,
    params: params.map((p) => ({ name: p.name, spec: p.spec.kind === "map" ? { ...p.spec, values: [...p.spec.values].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) } : p.spec })),
  };
  return createHash("sha256").update(canonicalJson({ family: content, taskHash })).digest("hex");
}

function checkDepth(r: FamilyReader, node: Node | null, depth: number): void {
  if (node === null) return;
  if (depth > L.maxNestingDepth) r.fail(node, "", `nesting deeper than ${L.maxNestingDepth} levels`, "families nest a few levels; check the indentation", "too_deep");
  if (isMap(node)) for (const p of node.items) checkDepth(r, (p.value ?? null) as Node | null, depth + 1);
  else if (isSeq(node)) for (const n of node.items) checkDepth(r, (n ?? null) as Node | null, depth + 1);
}

function readParam(r: FamilyReader, e: Entry, scope: Scope, earlier: readonly ParamDecl[]): ParamDecl {
  const name = String(e.key.value);
  const field = `params.${name}`;
  const line = r.pos(e.key.range![0]).line;
  const m = r.map(e.value, field, PARAM_KINDS, `a parameter ({ <kind>: ... }, kinds: ${PARAM_KINDS.join(", ")})`);
  if (m.size !== 1) r.fail(e.value ?? e.key, field, m.size === 0 ? "names no kind" : `has ${m.size} kinds (${[...m.keys()].join(", ")})`, `give exactly one of ${PARAM_KINDS.join(", ")}`, "bad_param");
  const [kind, { key, value }] = [...m][0]!;
  const f = `${field}.${kind}`;
  if (value === null && kind !== "const") r.fail(key, f, "has no value", "see FAMILIES.md, Parameters");
  const spec = ((): ParamSpec => {
    switch (kind) {
      case "choice": {
        const items = r.seq(value, f, 1, L.maxChoices);
        return { kind, values: items.map((n, i) => r.value(n, `${f}[${i}]`)) };
      }
      case "int":
      case "number": {
        const mm = r.map(value, f, kind === "int" ? ["min", "max"] : ["min", "max", "decimals"]);
        const min = r.number(r.required(mm, "min", value, f, "give min and max"), `${f}.min`, -L.maxAbsNumber, L.maxAbsNumber, kind === "int");
        const maxNode = r.required(mm, "max", value, f, "give min and max");
        const max = r.number(maxNode, `${f}.max`, -L.maxAbsNumber, L.maxAbsNumber, kind === "int");
        if (max < min) r.fail(maxNode, `${f}.max`, `max ${max} is below min ${min}`, "give max >= min", "out_of_range");
        if (kind === "int") return { kind, min, max };
        const d = mm.get("decimals");
        return { kind, min, max, decimals: d ? r.number(d.value, `${f}.decimals`, 0, L.maxDecimals, true) : 2 };
      }
      case "words": {
        const mm = r.map(value, f, ["count", "min", "max"]);
        const count = mm.get("count");
        if (count && (mm.has("min") || mm.has("max"))) r.fail(count.key, `${f}.count`, "count and min/max both given", "give count, or min and max");
        if (count) {
          const n = r.number(count.value, `${f}.count`, 1, L.maxWords, true);
          return { kind, min: n, max: n };
        }
        const min = r.number(r.required(mm, "min", value, f, "give count: N, or min and max"), `${f}.min`, 1, L.maxWords, true);
        const maxNode = r.required(mm, "max", value, f, "give count: N, or min and max");
        const max = r.number(maxNode, `${f}.max`, 1, L.maxWords, true);
        if (max < min) r.fail(maxNode, `${f}.max`, `max ${max} is below min ${min}`, "give max >= min", "out_of_range");
        return { kind, min, max };
      }
      case "text": {
        const mm = r.map(value, f, ["length", "alphabet"]);
        const length = r.number(r.required(mm, "length", value, f, "give length: N"), `${f}.length`, 1, L.maxTextLength, true);
        const a = mm.get("alphabet");
        const alphabet = a ? r.text(a.value, `${f}.alphabet`, L.maxTextLength) : "abcdefghijklmnopqrstuvwxyz";
        if (a && new Set(alphabet).size !== [...alphabet].length) r.fail(a.value, `${f}.alphabet`, "repeats a character", "list each character once; a repeated one would be drawn more often");
        return { kind, length, alphabet };
      }
      case "date": {
        const mm = r.map(value, f, ["from", "to", "format"]);
        const fromNode = r.required(mm, "from", value, f, 'give from: "YYYY-MM-DD" and to: "YYYY-MM-DD"');
        const toNode = r.required(mm, "to", value, f, 'give from: "YYYY-MM-DD" and to: "YYYY-MM-DD"');
        const from = readDate(r, fromNode, `${f}.from`);
        const to = readDate(r, toNode, `${f}.to`);
        if (to < from) r.fail(toNode, `${f}.to`, `${to} is before ${from}`, "give to >= from", "out_of_range");
        const fm = mm.get("format");
        const format = fm ? r.text(fm.value, `${f}.format`, 256) : "%Y-%m-%d";
        if (fm) {
          for (let i = 0; i < format.length; i++) {
            if (format[i] !== "%") continue;
            const d = format[i + 1];
            if (d === undefined || !DATE_DIRECTIVES.has(d)) r.fail(r.offsetIn(fm.value as Scalar, i), `${f}.format`, `%${d ?? ""} is not a supported directive`, "use %Y %m %d %B %b %A %a %e, or %% for a percent sign", "bad_param");
            i++;
          }
        }
        return { kind, from, to, format };
      }
      case "map": {
        const mm = r.map(value, f, ["param", "values"]);
        const paramNode = r.required(mm, "param", value, f, "name an earlier parameter: param: NAME");
        const param = r.text(paramNode, `${f}.param`, 64);
        r.inScope(paramNode.range![0], `${f}.param`, param, scope, `'${shortText(param)}'`);
        const valuesNode = r.required(mm, "values", value, f, "give values: { key: value, ... }");
        const values = new Map<string, ParamValue>();
        for (const v of r.dataMap(valuesNode, `${f}.values`, L.maxChoices, () => undefined)) {
          const k = scalarText(v.key, "");
          values.set(k, r.value(v.value, `${f}.values.${shortText(k)}`));
        }
        const source = earlier.find((p) => p.name === param);
        // Every value a choice (or const) can take must have an entry: else the episode would fail to draw.
        const takes = source?.spec.kind === "choice" ? source.spec.values : source?.spec.kind === "const" ? [source.spec.value] : [];
        const missing = takes.find((v) => !values.has(String(v)));
        if (missing !== undefined) r.fail(valuesNode, `${f}.values`, `has no entry for '${shortText(String(missing))}', a value of ${param}`, `add "${shortText(String(missing))}": ...`, "bad_param");
        return { kind, param, values };
      }
      case "const":
        return { kind, value: r.value(value, f) };
      case "format":
        return { kind, template: r.template(value, f, scope, L.maxParamValueChars, { empty: true, newlines: false }) };
    }
    throw new Error(`unreachable: ${kind}`);
  })();
  return { name, spec, line };
}

function readDate(r: FamilyReader, node: Node, field: string): string {
  const s = r.text(node, field, 10);
  const m = DATE.exec(s);
  const t = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : NaN;
  if (!m || Number.isNaN(t) || new Date(t).toISOString().slice(0, 10) !== s || Number(m[1]) < 1) r.fail(node, field, `'${shortText(s)}' is not a date`, 'write a quoted "YYYY-MM-DD", e.g. "2023-10-01"');
  return s;
}

function timeout(r: FamilyReader, m: Map<string, Entry>, field: string): number {
  const t = m.get("timeout_sec");
  return t ? r.number(t.value, `${field}.timeout_sec`, 0, TASK_LIMITS.maxDurationSec) : 0;
}

function absolutePath(r: FamilyReader, node: Node | null, field: string, scope: Scope): Template {
  const t = r.template(node, field, scope, 4096);
  // A path that starts with a parameter is checked when it is rendered (the value must then start with /).
  if (!t.text.startsWith("/") && !/^\{[a-z]/.test(t.text)) r.fail(node, field, `'${shortText(t.text)}' is not an absolute device path`, "write a path starting with /, e.g. /sdcard/notes.txt");
  return t;
}

function readSetupStep(r: FamilyReader, node: Node, field: string, scope: Scope): FamilySetupStep {
  const kinds = ["shell", "setting", "file", "sleep"];
  const m = r.map(node, field, [...kinds, "timeout_sec"], "a set-up step");
  const given = kinds.filter((k) => m.has(k));
  if (given.length !== 1) r.fail(node, field, given.length === 0 ? "a step does nothing" : `a step does one thing, this one ${given.join(" and ")}`, `give exactly one of ${kinds.join(", ")}`, "empty_step");
  const kind = given[0]!;
  const f = `${field}.${kind}`;
  const value = r.required(m, kind, node, field, "give it a value");
  const line = r.pos(node.range![0]).line;
  if (kind === "sleep") {
    if (m.has("timeout_sec")) r.fail(m.get("timeout_sec")!.key, `${field}.timeout_sec`, "a sleep has no timeout", "remove timeout_sec");
    return { kind, seconds: r.number(value, f, 0, TASK_LIMITS.maxDurationSec), line };
  }
  const timeoutSec = timeout(r, m, field);
  if (kind === "shell") return { kind, command: r.template(value, f, scope), timeoutSec, line };
  if (kind === "setting") {
    const s = r.map(value, f, ["namespace", "key", "value"]);
    const hint = "give namespace (global|secure|system), key and value";
    return {
      kind,
      namespace: r.oneOf(r.required(s, "namespace", value, f, hint), `${f}.namespace`, NAMESPACES),
      key: r.template(r.required(s, "key", value, f, hint), `${f}.key`, scope, 256),
      value: r.template(r.required(s, "value", value, f, hint), `${f}.value`, scope, L.maxParamValueChars, { empty: true }),
      timeoutSec,
      line,
    };
  }
  const s = r.map(value, f, ["path", "content"]);
  return {
    kind: "file",
    path: absolutePath(r, r.required(s, "path", value, f, "give path and content"), `${f}.path`, scope),
    content: r.template(r.required(s, "content", value, f, "give path and content"), `${f}.content`, scope, L.maxTemplateChars, { empty: true }),
    timeoutSec,
    line,
  };
}

function readChecks(r: FamilyReader, node: Node | null, scope: Scope): FamilyChecks {
  const m = r.map(node, "checks", ["combine", "every_steps", "reward", "items"]);
  const c = m.get("combine");
  const e = m.get("every_steps");
  const rw = m.get("reward");
  const items = r.seq(r.required(m, "items", node, "checks", "list the checks under items:"), "checks.items", 1, L.maxChecks);
  return {
    combine: c ? r.oneOf(c.value, "checks.combine", ["all", "any", "fraction"] as const) : "all",
    everySteps: e ? r.number(e.value, "checks.every_steps", 0, 1_000_000, true) : 0,
    reward: rw ? r.number(rw.value, "checks.reward", -TASK_LIMITS.maxAbsReward, TASK_LIMITS.maxAbsReward) : 1,
    items: items.map((n, i) => readCheck(r, n, `checks.items[${i}]`, i, scope)),
  };
}

function readCheck(r: FamilyReader, node: Node, field: string, index: number, scope: Scope): CheckSpec {
  const m = r.map(node, field, [...SOURCES, ...COMPARISONS, "name", "timeout_sec"], "a check");
  const sources = SOURCES.filter((k) => m.has(k));
  if (sources.length !== 1) r.fail(node, field, sources.length === 0 ? "a check without a source" : `a check reads one thing, this one ${sources.join(" and ")}`, `give exactly one of ${SOURCES.join(", ")}`, "bad_check");
  const comparisons = COMPARISONS.filter((k) => m.has(k));
  if (comparisons.length !== 1) r.fail(node, field, comparisons.length === 0 ? "a check without a comparison" : `a check compares once, this one with ${comparisons.join(" and ")}`, `give exactly one of ${COMPARISONS.join(", ")}`, "bad_check");
  const sourceKind = sources[0]!;
  const compareKind = comparisons[0]!;
  const compareEntry = m.get(compareKind)!;
  if (compareKind === "exists" && sourceKind !== "file" && sourceKind !== "tree") r.fail(compareEntry.key, `${field}.exists`, `a ${sourceKind} check cannot compare exists`, "exists is for file and tree checks; compare the value with equals, regex, number, json or fuzzy");
  if (sourceKind === "tree" && compareKind !== "exists") r.fail(compareEntry.key, `${field}.${compareKind}`, `a tree check compares exists only, not ${compareKind}`, "write exists: true for a node with these properties on screen, or exists: false");
  const source = readSource(r, sourceKind, m.get(sourceKind)!, `${field}.${sourceKind}`, scope);
  const compare = readComparison(r, compareKind, compareEntry, `${field}.${compareKind}`, scope, true) as Comparison;
  const n = m.get("name");
  return {
    name: n ? r.text(n.value, `${field}.name`, 128) : `checks[${index}] ${sourceKind}`,
    source,
    compare,
    timeoutSec: timeout(r, m, field),
    line: r.pos(node.range![0]).line,
  };
}

function emptyOrNull(r: FamilyReader, e: Entry, field: string): void {
  if (e.value !== null) r.map(e.value, field, [], `${field} (written {})`);
}

function readSource(r: FamilyReader, kind: (typeof SOURCES)[number], e: Entry, f: string, scope: Scope): CheckSource {
  const v = e.value;
  switch (kind) {
    case "shell":
      if (v === null) r.fail(e.key, f, "has no command", 'write shell: "command"');
      return { kind, command: r.template(v, f, scope) };
    case "setting": {
      const m = r.map(v, f, ["namespace", "key"]);
      return { kind, namespace: r.oneOf(r.required(m, "namespace", v, f, "give namespace and key"), `${f}.namespace`, NAMESPACES), key: r.template(r.required(m, "key", v, f, "give namespace and key"), `${f}.key`, scope, 256) };
    }
    case "file": {
      const m = r.map(v, f, ["path"]);
      return { kind, path: absolutePath(r, r.required(m, "path", v, f, "give path"), `${f}.path`, scope) };
    }
    case "sql": {
      const m = r.map(v, f, ["db", "query", "rows"]);
      const db = absolutePath(r, r.required(m, "db", v, f, "give db and query"), `${f}.db`, scope);
      const queryNode = r.required(m, "query", v, f, "give db and query");
      const query = r.text(queryNode, `${f}.query`, L.maxTemplateChars, { newlines: true });
      checkSqlQuery(r, queryNode as Scalar, query, `${f}.query`, scope);
      const rows = m.get("rows");
      return { kind, db, query, rows: rows ? (r.oneOf(rows.value, `${f}.rows`, ["first", "count"] as const)) : "first" };
    }
    case "tree": {
      const props = ["text", "text_regex", "resource_id", "class", "checked", "selected", "enabled"];
      const m = r.map(v, f, props);
      if (m.size === 0) r.fail(v ?? e.key, f, "names no property", `give at least one of ${props.join(", ")}`, "bad_check");
      const t = (k: string) => m.get(k);
      return {
        kind,
        ...(t("text") ? { text: r.template(t("text")!.value, `${f}.text`, scope, L.maxParamValueChars) } : {}),
        ...(t("text_regex") ? { textRegex: regexOf(r, t("text_regex")!.value, `${f}.text_regex`) } : {}),
        ...(t("resource_id") ? { resourceId: r.template(t("resource_id")!.value, `${f}.resource_id`, scope, 512) } : {}),
        ...(t("class") ? { className: r.template(t("class")!.value, `${f}.class`, scope, 512) } : {}),
        ...(t("checked") ? { checked: r.bool(t("checked")!.value, `${f}.checked`) } : {}),
        ...(t("selected") ? { selected: r.bool(t("selected")!.value, `${f}.selected`) } : {}),
        ...(t("enabled") ? { enabled: r.bool(t("enabled")!.value, `${f}.enabled`) } : {}),
      };
    }
    case "activity":
    case "answer":
      emptyOrNull(r, e, f);
      return { kind };
  }
}

function regexOf(r: FamilyReader, node: Node | null, field: string): PyRegex {
  const source = r.text(node, field, 1000, { newlines: true });
  try {
    return pyRegex(source);
  } catch (e) {
    return r.fail(node, field, `regex ${JSON.stringify(shortText(source))}: ${coerceError(e).message}`, "write a Python regex without back-references, lookaround, inline flags, conditionals, atomic groups or possessive quantifiers", "bad_regex");
  }
}

function readComparison(r: FamilyReader, kind: (typeof COMPARISONS)[number], e: Entry, f: string, scope: Scope, top: boolean): Comparison {
  const v = e.value;
  switch (kind) {
    case "equals":
    case "not_equals":
    case "fuzzy":
      if (v === null) r.fail(e.key, f, "has no value", `write ${kind}: "text"; quote an empty text: ""`);
      return { kind, value: r.template(v, f, scope, L.maxTemplateChars, { empty: true }) };
    case "regex":
      return { kind, regex: regexOf(r, v, f) };
    case "number": {
      const m = r.map(v, f, ["op", "value"]);
      return { kind, op: r.oneOf(r.required(m, "op", v, f, 'give op ("==", "<", ...) and value'), `${f}.op`, NUMBER_OPS), value: r.number(r.required(m, "value", v, f, "give op and value"), `${f}.value`, -L.maxAbsNumber, L.maxAbsNumber) };
    }
    case "exists":
      return { kind, value: r.bool(v, f) };
    case "json": {
      if (!top) r.fail(e.key, f, "a json comparison inside a json comparison", "give one path to the value");
      const inner = ["equals", "not_equals", "regex", "number", "fuzzy"] as const;
      const m = r.map(v, f, ["path", ...inner]);
      const pathNode = r.required(m, "path", v, f, 'give path, e.g. "$.items[0].title", and one comparison');
      const path = r.text(pathNode, `${f}.path`, 512);
      if (!JSON_PATH.test(path)) r.fail(pathNode, `${f}.path`, `'${shortText(path)}' is not a JSON path of this form`, 'write $ followed by .name, [index] or ["key"] steps, e.g. $.items[0].title');
      const given = inner.filter((k) => m.has(k));
      if (given.length !== 1) r.fail(v, f, given.length === 0 ? "a json comparison without a comparison" : `compares with ${given.join(" and ")}`, `give exactly one of ${inner.join(", ")}`, "bad_check");
      const then = readComparison(r, given[0]!, m.get(given[0]!)!, `${f}.${given[0]}`, scope, false) as Extract<Comparison, { kind: "json" }>["then"];
      return { kind, path, then };
    }
  }
}

/** `{name}` is never substituted into SQL (FAMILIES.md: bind `:name`); each `:name` must be a declared parameter. */
function checkSqlQuery(r: FamilyReader, node: Scalar, query: string, field: string, scope: Scope): void {
  for (const m of query.matchAll(BRACED)) {
    if (m[1] === undefined) continue;
    r.fail(r.offsetIn(node, m.index), field, `{${shortText(m[1])}} in a SQL query: parameters are bound, never substituted`, `write :${PARAM_NAME_PATTERN.test(m[1]) ? m[1] : "name"}, an SQLite named parameter`, "bad_template");
  }
  // `:name` outside quoted literals and identifiers.
  let quote: string | undefined;
  for (let i = 0; i < query.length; i++) {
    const c = query[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      continue;
    }
    if (c === "'" || c === '"' || c === "`") quote = c;
    else if (c === "[") quote = "]";
    else if (c === ":" && /[A-Za-z_]/.test(query[i + 1] ?? "") && !/[A-Za-z0-9_:]/.test(query[i - 1] ?? "")) {
      const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(query.slice(i + 1))![0];
      const at = r.offsetIn(node, i);
      if (!PARAM_NAME_PATTERN.test(name)) r.fail(at, field, `:${shortText(name)} is not a parameter name`, "bind declared parameters: lower case letters, digits and _", "bad_template");
      r.inScope(at, field, name, scope, `:${name}`);
      i += name.length;
    }
  }
}

function readTaskServer(r: FamilyReader, node: Node | null): TaskServerRef {
  const m = r.map(node, "task_server", ["url", "class", "timeout_sec"]);
  const urlNode = r.required(m, "url", node, "task_server", 'give url, e.g. "http://127.0.0.1:8765", and class');
  const url = r.text(urlNode, "task_server.url", 2000);
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    // below
  }
  if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) r.fail(urlNode, "task_server.url", `'${shortText(url)}' is not an http(s) URL`, 'write e.g. "http://127.0.0.1:8765"');
  if (parsed.username || parsed.password) r.fail(urlNode, "task_server.url", "carries user:password@", "task files are read by every host and the queue; give the server no credentials in its URL");
  const classNode = r.required(m, "class", node, "task_server", "name the task class: class: SystemWifiTurnOn");
  const className = r.text(classNode, "task_server.class", 128);
  if (!CLASS_NAME.test(className)) r.fail(classNode, "task_server.class", `'${shortText(className)}' is not a class name`, "letters, digits, _ and .: a Python class or module.Class");
  const t = m.get("timeout_sec");
  return { url, className, timeoutSec: t ? r.number(t.value, "task_server.timeout_sec", 0.001, 3600) : 60 };
}
