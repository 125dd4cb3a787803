/** Reading task files: parse with protobufjs against the farm's schemas, pick the dialect, validate, normalise. */
import textformat from "protobufjs/ext/textformat.js";
import type protobuf from "protobufjs";
import { closeSync, constants, fstatSync, openSync, readdirSync, readSync, statSync } from "node:fs";
import { basename, dirname, extname, join, resolve } from "node:path";
import { Checker, type Obj } from "./checker.ts";
import { TaskLoadError } from "./errors.ts";
import { taskHash } from "./hash.ts";
import { rewriteLenientEscapes, tokenize } from "./lexer.ts";
import { TASK_LIMITS } from "./limits.ts";
import { checkTokens, prescanText } from "./prescan.ts";
import { checkRawValues, checkTaskId } from "./raw-checks.ts";
import { indexFieldLines, type LineIndex } from "./line-index.ts";
import type { Dialect, LoadedTask, TaskWarning } from "./model.ts";
import { normaliseTask } from "./normalise.ts";
import { FAMILY_LIMITS } from "./limits.ts";
import { FAMILY_SUFFIX, familyIdLines, isFamilyPath, parseFamilyText } from "./family.ts";
import { taskType, type SchemaName } from "./schema.ts";
import { coerceError } from "@farm/errors";

export interface LoadOptions {
  /** Folders searched for APKs named by relative `filesystem.path`s (after the task file's folder) and `mpm.path`s. */
  apkDirs?: string[];
  /** The dialect a task registry names for the file: parse only with that schema (default: detect). */
  dialect?: Dialect;
}

export interface ParseOptions extends LoadOptions {
  /** The file the text came from (relative paths resolve against its folder; messages name it as given). */
  sourcePath: string;
}

const TO_OBJECT: protobuf.IConversionOptions = { enums: String, longs: String, oneofs: true };
const GOOGLE3_HEADER = /^#\s*proto-file:\s*google3\//m;
/** Fields only the early-2021 internal dialect (b) has. */
const INTERNAL_ONLY = ["log_tag", "log_prefix", "apk_source", "mpm"];
/** Fields (b) lacks, which therefore cannot be mixed with its own. */
const NOT_IN_INTERNAL = ["log_parsing_config", "max_num_steps", "max_episode_steps", "uninstall_package"];
const LEGACY_TELLTALES = ["adb_call", "max_num_steps", "max_duration_sec", ...INTERNAL_ONLY];

const idLines = new WeakMap<LoadedTask, number>();

export function parseTaskText(text: string, opts: ParseOptions): LoadedTask {
  const file = opts.sourcePath;
  prescanText(file, text);
  const { text: prepared, fixes } = rewriteLenientEscapes(text);
  const tokens = tokenize(prepared);
  checkTokens(file, tokens);

  const attempt = (schema: SchemaName): { raw: Obj } | { error: Error } => {
    try {
      const type = taskType(schema);
      return { raw: type.toObject(textformat.fromText(type, prepared), TO_OBJECT) as Obj };
    } catch (e) {
      return { error: coerceError(e) };
    }
  };

  let schema: SchemaName = opts.dialect && opts.dialect !== "current" ? "legacy" : "current";
  let result = attempt(schema);
  if ("error" in result && opts.dialect) {
    throw parseError(file, result.error, indexFieldLines(prepared, taskType(schema)), taskType(schema));
  }
  if ("error" in result) {
    const legacy = attempt("legacy");
    if ("raw" in legacy) {
      schema = "legacy";
      result = legacy;
    } else {
      // Both failed: report against the schema the file looks written for.
      schema = looksLegacy(prepared) ? "legacy" : "current";
      const error = schema === "legacy" ? legacy.error : result.error;
      throw parseError(file, error, indexFieldLines(prepared, taskType(schema)), taskType(schema));
    }
  }

  const index = indexFieldLines(prepared, taskType(schema), tokens);
  const internalField = INTERNAL_ONLY.find((n) => index.mentions(n));
  const dialect: Dialect = opts.dialect ?? (schema === "current" ? "current" : internalField || GOOGLE3_HEADER.test(prepared) ? "internal-2021" : "seed-2021");
  const ck = new Checker(file, index);
  for (const f of fixes) {
    const at = index.fieldAt(f.line);
    ck.warnings.push({
      line: f.line,
      field: at?.line === f.line ? at.path : "",
      message: `unknown escape ${f.escape} read as Python does (a backslash and '${f.escape.slice(1)}'); write \\${f.escape} to say so explicitly`,
    });
  }
  if (dialect === "internal-2021") {
    for (const name of NOT_IN_INTERNAL) {
      const at = index.occurrences.find((o) => o.name === name);
      if (at) {
        const marker = internalField ?? "the google3 proto-file header";
        ck.fail("mixed_dialect", at.path, `${name} does not exist in the early-2021 dialect this file uses (it has ${marker})`, "write the file in one dialect: drop the early-2021 fields (log_tag, log_prefix, apk_source, mpm) or this one");
      }
    }
  }
  const sourcePath = resolve(file);
  const task = normaliseTask({ ck, taskDir: dirname(sourcePath), apkDirs: (opts.apkDirs ?? []).map((d) => resolve(d)) }, result.raw, dialect);
  checkRawValues(ck, result.raw);
  const derivedId = task.id === "";
  if (derivedId) task.id = idFromFileName(file);
  checkTaskId(ck, task.id, derivedId);
  if (ck.errors.length > 0) throw ck.errors.reduce((a, b) => (b.line < a.line ? b : a));
  const warnings: TaskWarning[] = [...ck.warnings].sort((a, b) => a.line - b.line);
  const loaded: LoadedTask = { task, hash: taskHash(task), dialect, sourcePath, warnings };
  idLines.set(loaded, index.lineOf("id"));
  return loaded;
}

function looksLegacy(text: string): boolean {
  const index = indexFieldLines(text, undefined);
  return GOOGLE3_HEADER.test(text) || LEGACY_TELLTALES.some((n) => index.mentions(n)) || index.has("package_name") || index.has("full_activity_name");
}

export function idFromFileName(file: string): string {
  return basename(file, extname(file));
}

/** protobufjs error → TaskLoadError with the line, the field being parsed and a hint. */
function parseError(file: string, error: Error, index: LineIndex, type: protobuf.Type): TaskLoadError {
  const message = error.message;
  const lineMatch = / \(line (\d+)\)$/.exec(message);
  const detail = message.replace(/ \(line \d+\)$/, "");
  const unknown = /^\.?([\w.]+): unknown field '(\w+)'/.exec(message);
  if (unknown && lineMatch) {
    const line = Number(lineMatch[1]);
    const at = index.fieldAt(line, unknown[2]);
    const owner = type.root.lookup(unknown[1]!);
    const fields = owner && "fields" in owner ? Object.keys((owner as protobuf.Type).fields).join(", ") : "";
    const ownerName = owner?.name ?? unknown[1]!;
    return new TaskLoadError("unknown_field", file, line, at?.path ?? unknown[2]!, `unknown field '${unknown[2]}' in ${ownerName}`, `remove it or fix its spelling${fields ? `; ${ownerName} has: ${fields}` : ""}`);
  }
  if (lineMatch) {
    const line = Number(lineMatch[1]);
    const at = index.fieldAt(line);
    const hint = /expected string/.test(detail) ? 'quote string values, e.g. path: "apks/app.apk"' : "fix the text-format syntax at this line";
    return new TaskLoadError("syntax", file, line, at && at.line === line ? at.path : "", detail, hint);
  }
  // Errors about a scalar value carry no line: place them at the first value that does not fit its field.
  if (/value expected|illegal|out of range/.test(detail)) {
    const bad = index.occurrences.find((o) => o.scalar?.field && !scalarFits(o.scalar.field, o.scalar.text, o.scalar.quoted));
    if (bad) return new TaskLoadError("syntax", file, bad.line, bad.path, `${bad.scalar!.text} is not a valid ${bad.scalar!.field!.type} value`, valueHint(bad.scalar!.field!));
  }
  // A string field whose escapes spell bytes that are not UTF-8: place it at the first such literal.
  if (/invalid UTF-8/.test(detail)) {
    const bad = index.occurrences.find((o) => o.scalar?.quoted && o.scalar.field?.type === "string" && /\\(?:x[89a-fA-F]|[2-3][0-7]{2})/.test(o.scalar.text));
    if (bad) return new TaskLoadError("bad_text", file, bad.line, bad.path, "escapes in this string spell bytes that are not UTF-8 text", "write the character itself, or \\u escapes such as \\u00e9");
  }
  // "multiple values" errors carry no line: place them at the second occurrence of the field.
  const multiple = /^\.?([\w.]*?)\.?(\w+): multiple values$/.exec(message);
  if (multiple) {
    const dup = secondOccurrence(index, multiple[2]!, type);
    return new TaskLoadError("syntax", file, dup?.line ?? 1, dup?.path ?? multiple[2]!, `${multiple[2]} is set more than once`, "a singular field or a oneof takes one value; keep one");
  }
  return new TaskLoadError("syntax", file, 1, "", detail, "fix the text-format syntax");
}

const NUMBER = /^-?(?:0[xX][0-9A-Fa-f]+|[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?[fF]?|\.[0-9]+(?:[eE][+-]?[0-9]+)?[fF]?|inf|infinity|nan)$/i;

/** The values of an enum field, else undefined. */
function enumValuesOf(field: protobuf.Field): Record<string, number> | undefined {
  return field.resolvedType && "values" in field.resolvedType ? (field.resolvedType as protobuf.Enum).values : undefined;
}

/** Whether a written scalar could be a value of `field` (enough to find the one protobufjs rejected). */
function scalarFits(field: protobuf.Field, text: string, quoted: boolean): boolean {
  const enumValues = enumValuesOf(field);
  if (enumValues) return !quoted && (Object.hasOwn(enumValues, text) || /^-?[0-9]+$/.test(text));
  if (field.type === "string" || field.type === "bytes") return quoted;
  if (field.type === "bool") return !quoted && /^(?:true|false|True|False|t|f|1|0)$/.test(text);
  if (quoted || !NUMBER.test(text)) return false;
  const isFloat = field.type === "float" || field.type === "double";
  if (isFloat) return true;
  if (!/^-?(?:0[xX][0-9A-Fa-f]+|[0-9]+)$/.test(text)) return false;
  const range = INT_RANGES[field.type];
  if (!range) return true;
  const v = BigInt(text.replace(/^(-?)0[xX]/, "$10x"));
  return v >= range[0] && v <= range[1];
}

/** Integer types protobufjs range-checks (without saying where): so the error is placed at the value's own line. */
const INT_RANGES: Record<string, [bigint, bigint]> = {
  __proto__: null as never,
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  sint32: [-(2n ** 31n), 2n ** 31n - 1n],
  sfixed32: [-(2n ** 31n), 2n ** 31n - 1n],
  uint32: [0n, 2n ** 32n - 1n],
  fixed32: [0n, 2n ** 32n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  sint64: [-(2n ** 63n), 2n ** 63n - 1n],
  sfixed64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint64: [0n, 2n ** 64n - 1n],
  fixed64: [0n, 2n ** 64n - 1n],
};

function valueHint(field: protobuf.Field): string {
  const enumValues = enumValuesOf(field);
  if (enumValues) return `use one of ${Object.keys(enumValues).join(", ")}`;
  if (field.type === "string" || field.type === "bytes") return 'quote string values, e.g. "text"';
  return `write a value of type ${field.type}`;
}

/** The occurrence that repeats a singular field (or a second member of the oneof `name`) under the same parent. */
function secondOccurrence(index: LineIndex, name: string, type: protobuf.Type) {
  const members = new Set([name]);
  const visit = (ns: protobuf.NamespaceBase): void => {
    for (const nested of ns.nestedArray) {
      if ("oneofs" in nested && (nested as protobuf.Type).oneofs?.[name]) for (const f of (nested as protobuf.Type).oneofs[name]!.oneof) members.add(f);
      if ("nestedArray" in nested) visit(nested as protobuf.NamespaceBase);
    }
  };
  visit(type.root);
  const seen = new Set<string>();
  for (const o of index.occurrences) {
    if (!members.has(o.name)) continue;
    const parent = o.path.slice(0, o.path.length - o.name.length);
    if (seen.has(parent)) return o;
    seen.add(parent);
  }
  return undefined;
}

/** A task file (any dialect), or a task family (`*.family.yaml`, FAMILIES.md) with the task it refers to. */
export function loadTaskFile(path: string, opts: LoadOptions = {}): LoadedTask {
  if (isFamilyPath(path)) return parseFamilyText(readTaskText(path, FAMILY_LIMITS.maxFileBytes), path, (taskPath) => loadTaskFile(taskPath, { ...opts, dialect: undefined }));
  return parseTaskText(readTaskText(path), { ...opts, sourcePath: path });
}

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The text of a task file: only a regular file (a FIFO, device or socket is refused, and the open itself never
 * blocks: O_NONBLOCK), at most TASK_LIMITS.maxFileBytes, valid UTF-8.
 */
function readTaskText(path: string, maxBytes: number = TASK_LIMITS.maxFileBytes): string {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    throw new TaskLoadError("read_failed", path, 1, "", `cannot read the file: ${coerceError(e).message}`, "check the path");
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) {
      const kind = st.isFIFO() ? "a FIFO" : st.isSocket() ? "a socket" : st.isDirectory() ? "a folder" : "a device or other special file";
      throw new TaskLoadError("not_a_file", path, 1, "", `${kind}, not a regular file`, "name task files (or folders holding them)");
    }
    if (st.size > maxBytes)
      throw new TaskLoadError("too_large", path, 1, "", `task file of ${st.size} bytes is larger than the ${maxBytes} allowed`, "install big APKs from a file (install_apk { filesystem { path } }) instead of an inline blob");
    const buf = Buffer.alloc(Math.min(st.size, maxBytes) + 1);
    let n = 0;
    for (let r = 1; r > 0 && n < buf.length; n += r) r = readSync(fd, buf, n, buf.length - n, null);
    if (n > maxBytes) throw new TaskLoadError("too_large", path, 1, "", `task file grew beyond ${maxBytes} bytes while being read`, "keep task files small");
    try {
      return UTF8.decode(buf.subarray(0, n));
    } catch {
      throw new TaskLoadError("bad_text", path, 1, "", "the file is not valid UTF-8 text", "save it as UTF-8");
    }
  } catch (e) {
    if (e instanceof TaskLoadError) throw e;
    throw new TaskLoadError("read_failed", path, 1, "", `cannot read the file: ${coerceError(e).message}`, "check the path");
  } finally {
    closeSync(fd);
  }
}

const TASK_EXTENSIONS = new Set([".textproto", ".pbtxt", ".txtpb", ".textpb"]);

/** Files named directly, plus task files (by extension) and task families (`*.family.yaml`) found recursively in folders, in sorted order. */
export function expandTaskPaths(pathsOrDirs: readonly string[], opts: { families?: boolean } = {}): string[] {
  const families = opts.families ?? true;
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = join(dir, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (TASK_EXTENSIONS.has(extname(entry.name)) || (families && entry.name.endsWith(FAMILY_SUFFIX))) files.push(p);
    }
  };
  for (const p of pathsOrDirs) {
    let isDir = false;
    try {
      isDir = statSync(p).isDirectory();
    } catch {
      // reported as read_failed by loadTaskFile
    }
    if (isDir) walk(p);
    else files.push(p);
  }
  return files;
}

/** Loads every task file; invalid files become errors, and a repeated task id is an error on the later file. */
export function loadTaskSet(pathsOrDirs: readonly string[], opts: LoadOptions = {}): { tasks: LoadedTask[]; errors: TaskLoadError[] } {
  const tasks: LoadedTask[] = [];
  const errors: TaskLoadError[] = [];
  const byId = new Map<string, LoadedTask>();
  for (const file of expandTaskPaths(pathsOrDirs)) {
    try {
      const loaded = loadTaskFile(file, opts);
      const first = byId.get(loaded.task.id);
      // The same task written in another dialect (`farm task convert`, tasks/current/): one task, kept once.
      if (first && first.hash === loaded.hash && first.dialect !== loaded.dialect) continue;
      if (first) {
        const familyLine = familyIdLines.get(loaded);
        errors.push(
          familyLine !== undefined
            ? new TaskLoadError("duplicate_id", file, familyLine, "family", `task id "${loaded.task.id}" is already used by ${first.sourcePath}`, "give each family and task in a set its own id", 1)
            : new TaskLoadError("duplicate_id", file, idLines.get(loaded) ?? 1, "id", `task id "${loaded.task.id}" is already used by ${first.sourcePath}`, "give each task in a set its own id (or file name)"),
        );
        continue;
      }
      byId.set(loaded.task.id, loaded);
      tasks.push(loaded);
    } catch (e) {
      if (e instanceof TaskLoadError) errors.push(e);
      else throw e;
    }
  }
  return { tasks, errors };
}
