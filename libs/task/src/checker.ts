/** Collects validation errors and warnings for one task file, each placed at the line of its field path. */
import { TaskLoadError, type TaskErrorCode } from "./errors.ts";
import type { LineIndex } from "./line-index.ts";
import type { PyRegex, TaskWarning } from "./model.ts";
import { isActivityName, isPackageName } from "./names.ts";
import { pyRegex, pyRegexWhole } from "./pyregex.ts";
import { coerceError } from "@farm/errors";

/** A plain object from protobufjs `toObject` (fields by their text-format names). */
export type Obj = { [field: string]: unknown };

export const obj = (x: unknown): Obj | undefined => (x !== null && typeof x === "object" && !Array.isArray(x) ? (x as Obj) : undefined);
export const str = (x: unknown): string => (typeof x === "string" ? x : "");
export const num = (x: unknown): number => (typeof x === "number" ? x : typeof x === "string" ? Number(x) : 0);
export const list = (x: unknown): unknown[] => (Array.isArray(x) ? x : []);
export const strings = (x: unknown): string[] => list(x).map(str);

export class Checker {
  readonly errors: TaskLoadError[] = [];
  readonly warnings: TaskWarning[] = [];

  constructor(
    readonly file: string,
    readonly index: LineIndex,
  ) {}

  fail(code: TaskErrorCode, field: string, detail: string, hint: string): void {
    this.errors.push(new TaskLoadError(code, this.file, this.index.lineOf(field), field, detail, hint));
  }

  warn(field: string, message: string): void {
    this.warnings.push({ line: this.index.lineOf(field), field, message });
  }

  /** A Python regex; on failure records `bad_regex` and returns a never-matching one so checking continues. */
  regex(field: string, source: string, whole = false): PyRegex {
    try {
      return whole ? pyRegexWhole(source) : pyRegex(source);
    } catch (e) {
      this.fail("bad_regex", field, `regex ${JSON.stringify(source)}: ${coerceError(e).message}`, "write a Python regex without inline flags, conditionals, atomic groups or possessive quantifiers");
      return pyRegex("");
    }
  }

  packageName(field: string, value: string, optional = false): string {
    if (value === "" && optional) return value;
    if (!isPackageName(value))
      this.fail("bad_package", field, `${JSON.stringify(value)} is not an Android package name`, "write a package name such as \"com.example.app\" (dot-separated, each part starting with a letter)");
    return value;
  }

  activity(field: string, value: string, what = "activity"): string {
    if (value === "") this.fail("empty_activity", field, `empty ${what}`, `name the ${what} as "pkg/pkg.ClassName"`);
    else if (!isActivityName(value))
      this.fail("bad_activity", field, `${JSON.stringify(value)} is not a ${what} name of the form pkg/Class`, `write "com.example.app/com.example.app.MainActivity" or "com.example.app/.MainActivity"`);
    return value;
  }

  /** A wait budget: negative is always an error; zero too when `positive` (the wait would never run). */
  timeout(field: string, value: number, positive: boolean): number {
    if (value < 0) this.fail("negative_timeout", field, `negative timeout ${value}`, "use a number of seconds > 0");
    else if (positive && value === 0)
      this.fail("zero_timeout", field, "timeout is 0 (or missing), so this check can never succeed", "set timeout_sec to the seconds to wait, e.g. 10.0");
    return value;
  }

  nonEmpty(field: string, value: string, what: string): string {
    if (value === "") this.fail("bad_value", field, `empty ${what}`, `give the ${what}`);
    return value;
  }
}
