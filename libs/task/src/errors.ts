/** Load-time errors of task files: stable codes, a file:line, the field path, and what to do about it. */
import { FarmError } from "@farm/errors";
import { terminalSafe } from "@farm/terminal-text";

export type TaskErrorCode =
  | "read_failed"
  | "syntax"
  | "unknown_field"
  | "mixed_dialect"
  | "conflicting_limits"
  | "empty_step"
  | "empty_command"
  | "tap_step"
  | "negative_timeout"
  | "zero_timeout"
  | "empty_activity"
  | "bad_activity"
  | "bad_package"
  | "bad_regex"
  | "bad_dtype"
  | "bad_shape"
  | "bad_extras_spec"
  | "bad_apk"
  | "bad_settings"
  | "bad_package_manager"
  | "bad_value"
  | "duplicate_id"
  | "not_a_file"
  | "too_large"
  | "too_deep"
  | "empty_file"
  | "bad_text"
  | "bad_id"
  | "out_of_range"
  // task families (FAMILIES.md)
  | "bad_template"
  | "bad_param"
  | "bad_check"
  | "bad_family_task";

/** Not retryable: the same file fails the same way until someone edits it. */
export class TaskLoadError extends FarmError<TaskErrorCode> {
  override readonly name = "TaskLoadError";
  constructor(
    code: TaskErrorCode,
    /** The task file (as given by the caller). */
    readonly file: string,
    /** 1-based line in the file. */
    readonly line: number,
    /** Text-format field path such as `reset_steps[2].adb_call.start_activity.full_activity` ("" = whole file). */
    readonly field: string,
    /** What is wrong. */
    readonly detail: string,
    /** What to do about it. */
    readonly hint: string,
    /** 1-based column, where the file format gives one (task families: `file:line:column`). */
    readonly column?: number,
  ) {
    super(code, formatParts(file, line, field, detail, hint, column));
  }
}

function formatParts(file: string, line: number, field: string, detail: string, hint: string, column?: number): string {
  // Control and bidi characters from a file (or its name) are shown escaped, never sent raw to a terminal.
  const at = column !== undefined ? `${line}:${column}` : `${line}`;
  return terminalSafe(`${file}:${at}: ${field ? `${field}: ` : ""}${detail}${hint ? ` (${hint})` : ""}`);
}

/** `file:line: field: message (hint)` (families: `file:line:column: …`) — one line, as printed by `farm task validate`. */
export function formatTaskError(e: TaskLoadError): string {
  return formatParts(e.file, e.line, e.field, e.detail, e.hint, e.column);
}
