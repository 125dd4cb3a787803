/**
 * The normalised task model: every dialect (seed 2021, internal 2021, current) is turned into this one
 * shape, which follows the current AndroidEnv schema (task-format.md §5.3). Times are in seconds as in
 * the files; `<= 0` limits mean "no limit", as upstream.
 */

export type Dialect = "seed-2021" | "internal-2021" | "current";

/** One match of a task regex: groups by number (0 = the whole match) and by name; undefined = did not take part. */
export interface PyMatch {
  readonly [group: number]: string | undefined;
  /** Named groups (a null-prototype object, so any name is just a name). */
  readonly groups: Readonly<Record<string, string | undefined>>;
}

/**
 * A Python regex from a task file, matched by a linear-time engine (libs/task/src/regex): no pattern or text can
 * make it backtrack, so matching a log line always takes time proportional to the line.
 */
export interface PyRegex {
  /** The regex exactly as written in the task file (Python syntax). */
  readonly source: string;
  /** `re.match(text)`: anchored at the start; null when it does not match (an empty regex never matches). */
  match(text: string): PyMatch | null;
  /** Whether `match` would succeed (cheaper: no captures). */
  test(text: string): boolean;
}

export interface AppScreen {
  /** `pkg/full.class.Name`. */
  activity: string;
  /** One regex per level of the view tree (task-format.md §7.4). */
  viewHierarchyPath: PyRegex[];
}

export type ApkLocation =
  | {
      kind: "filesystem";
      /** absolute host path, resolved against the task file's folder or the APK folder */ path: string;
      /** The path as written in the task file (what the content hash covers, so it is the same on every host). */
      declaredPath: string;
    }
  | { kind: "blob"; contents: Uint8Array }
  /** An internal package store that does not exist outside its owner; runnable only if the APK folder holds `path`. */
  | { kind: "mpm"; packageName: string; label: string; path: string };

export type SettingsNamespace = "system" | "secure" | "global";

export type SettingsVerb =
  | { verb: "get"; key: string }
  | { verb: "put"; key: string; value: string }
  | { verb: "delete"; key: string }
  | { verb: "reset"; packageName: string; mode: "" | "untrusted_defaults" | "untrusted_clear" | "trusted_defaults" }
  | { verb: "list" };

export interface DumpsysOptions {
  service: string;
  args: string[];
  listOnly: boolean;
  timeoutSec: number;
  timeoutMs: number;
  proto: boolean;
  priority: "" | "NORMAL" | "HIGH" | "CRITICAL";
  skipServices: string[];
}

/** The 17 commands of the current `AdbRequest` (legacy commands are mapped onto them, §5.3). */
export type AdbCommand =
  | { command: "install_apk"; location: ApkLocation }
  | { command: "start_activity"; fullActivity: string; extraArgs: string[]; forceStop: boolean }
  | { command: "force_stop"; packageName: string }
  | { command: "tap"; x: number; y: number }
  | { command: "press_button"; button: "HOME" | "BACK" | "ENTER" }
  | { command: "start_screen_pinning"; fullActivity: string }
  | { command: "uninstall_package"; packageName: string }
  | { command: "get_current_activity" }
  | { command: "push"; content: Uint8Array; path: string }
  | { command: "pull"; path: string }
  | { command: "input_text"; text: string }
  | { command: "settings"; namespace: SettingsNamespace; action: SettingsVerb }
  | { command: "generic"; args: string[] }
  | { command: "package_manager_list"; what: "features" | "libraries" | "packages" }
  | { command: "package_manager_clear"; packageName: string; userId: string }
  | { command: "package_manager_grant"; packageName: string; permissions: string[] }
  | { command: "get_orientation" }
  | { command: "send_broadcast"; action: string; component: string }
  | { command: "dumpsys"; options: DumpsysOptions };

export type AdbCommandName = AdbCommand["command"];

export interface AdbRequest {
  /** Per-request deadline in seconds; 0 = the driver's default. */
  timeoutSec: number;
  cmd: AdbCommand;
}

/** What a setup or reset step does (a step may also be check-only). */
export type StepAction =
  | { kind: "adb"; request: AdbRequest }
  | { kind: "sleep"; timeSec: number }
  /** Legacy: start one of the activities (chosen with the episode's seeded RNG) and wait for it as the app screen. */
  | { kind: "start_random_activity"; activities: string[]; extraArgs: string[]; timeoutSec: number }
  | { kind: "force_stop_random_activity" }
  | { kind: "clear_cache_random_activity" };

export type SuccessCheck =
  | { kind: "wait_for_app_screen"; appScreen: AppScreen; timeoutSec: number }
  | { kind: "check_install"; packageName: string; timeoutSec: number }
  /** Legacy: a logcat message matching the regex within the timeout (listening from the step's start). */
  | { kind: "wait_for_message"; message: PyRegex; timeoutSec: number };

export interface SuccessCondition {
  /** Attempts = max(numRetries, 3), as upstream. */
  numRetries: number;
  check: SuccessCheck;
}

export interface SetupStep {
  action?: StepAction;
  successCondition?: SuccessCondition;
  /** 1-based line of the step in its task file, for error messages. */
  line: number;
}

export interface RewardEvent {
  event: PyRegex;
  reward: number;
}

export interface LogParsing {
  /** Logcat filter specs such as `AndroidRLTask:V`; the runtime appends `*:S`. */
  filters: string[];
  /**
   * Dialect (b) `log_prefix`: a regex fragment required between the tag's colon and the message;
   * lines without it are dropped. Absent for other dialects.
   */
  messagePrefix?: PyRegex;
  score?: PyRegex;
  reward: PyRegex[];
  episodeEnd: PyRegex[];
  extra: PyRegex[];
  jsonExtra: PyRegex[];
  rewardEvent: RewardEvent[];
}

export type DataType =
  | "FLOAT" | "DOUBLE" | "INT8" | "INT16" | "INT32" | "INT64" | "UINT8" | "UINT16" | "UINT32" | "UINT64"
  | "BOOL" | "STRING_U1" | "STRING_U16" | "STRING_U25" | "STRING_U250" | "STRING" | "OBJECT";

export interface ArraySpec {
  name: string;
  shape: number[];
  dtype: DataType;
}

export interface Task {
  /** From the file, or derived from the file name when empty. */
  id: string;
  name: string;
  description: string;
  /** Informational (legacy dialects). */
  packageName: string;
  fullActivityName: string;
  setupSteps: SetupStep[];
  resetSteps: SetupStep[];
  expectedAppScreen?: AppScreen;
  /** Wall-clock episode limit; `<= 0` disables. */
  maxEpisodeSec: number;
  /** Step limit; `<= 0` disables. */
  maxEpisodeSteps: number;
  logParsing: LogParsing;
  extrasSpec: ArraySpec[];
}

export interface TaskWarning {
  line: number;
  field: string;
  message: string;
}

/** A task as loaded from a file: the model plus its identity. */
export interface LoadedTask {
  task: Task;
  /** sha256 (hex) of the canonical JSON of the normalised task; a job names `id` + `hash`. */
  hash: string;
  dialect: Dialect;
  /** Absolute path of the file it came from. */
  sourcePath: string;
  warnings: TaskWarning[];
  /**
   * Set when this entry is a task family (FAMILIES.md): `task` is the AndroidEnv task it runs, with the family's id;
   * `hash` covers the family file and that task.
   */
  family?: TaskFamily;
}

// ---- task families (FAMILIES.md): what the loader hands on; templates stay unrendered here ({name}), @farm/scoring renders them per episode ----

/** A parameter value: what a generator draws, a campaign fixes, a trajectory records. */
export type ParamValue = string | number | boolean;
/** An episode's parameters. Built with a null prototype (names are validated, never used to index plain objects). */
export type TaskParams = Readonly<Record<string, ParamValue>>;

/** A text with `{name}` placeholders (FAMILIES.md "Substitution"), kept as written; `line` locates it for errors. */
export interface Template {
  text: string;
  line: number;
}

export type ParamSpec =
  | { kind: "choice"; values: ParamValue[] }
  | { kind: "int"; min: number; max: number }
  | { kind: "number"; min: number; max: number; decimals: number }
  | { kind: "words"; min: number; max: number }
  | { kind: "text"; length: number; alphabet: string }
  | { kind: "date"; from: string; to: string; format: string }
  | { kind: "map"; param: string; values: ReadonlyMap<string, ParamValue> }
  | { kind: "const"; value: ParamValue }
  | { kind: "format"; template: Template };

export interface ParamDecl {
  name: string;
  spec: ParamSpec;
  line: number;
}

export type FamilySetupStep =
  | { kind: "shell"; command: Template; timeoutSec: number; line: number }
  | { kind: "setting"; namespace: SettingsNamespace; key: Template; value: Template; timeoutSec: number; line: number }
  | { kind: "file"; path: Template; content: Template; timeoutSec: number; line: number }
  | { kind: "sleep"; seconds: number; line: number };

export type CheckSource =
  | { kind: "shell"; command: Template }
  | { kind: "setting"; namespace: SettingsNamespace; key: Template }
  | { kind: "file"; path: Template }
  /** `query` uses `:name` bound parameters; `rows: "count"` compares the number of rows instead of the first value. */
  | { kind: "sql"; db: Template; query: string; rows: "first" | "count" }
  | { kind: "tree"; text?: Template; textRegex?: PyRegex; resourceId?: Template; className?: Template; checked?: boolean; selected?: boolean; enabled?: boolean }
  | { kind: "activity" }
  | { kind: "answer" };

export type NumberOp = "==" | "!=" | "<" | "<=" | ">" | ">=";

export type Comparison =
  | { kind: "equals"; value: Template }
  | { kind: "not_equals"; value: Template }
  | { kind: "regex"; regex: PyRegex }
  | { kind: "number"; op: NumberOp; value: number }
  | { kind: "json"; path: string; then: Exclude<Comparison, { kind: "json" } | { kind: "exists" }> }
  | { kind: "exists"; value: boolean }
  | { kind: "fuzzy"; value: Template };

export interface CheckSpec {
  /** `name:` or `checks[i] <source kind>`. */
  name: string;
  source: CheckSource;
  compare: Comparison;
  timeoutSec: number;
  line: number;
}

export interface FamilyChecks {
  combine: "all" | "any" | "fraction";
  /** 0: score at the end only; N: also every N steps, ending the episode (goal_reached) once success = 1. */
  everySteps: number;
  /** Added to the last step's reward × success. */
  reward: number;
  items: CheckSpec[];
}

export interface TaskServerRef {
  url: string;
  className: string;
  timeoutSec: number;
}

export interface TaskFamily {
  id: string;
  /** Absolute path of the `.family.yaml`. */
  sourcePath: string;
  /** Absolute path of the AndroidEnv task file it runs. */
  taskPath: string;
  goal?: Template;
  params: ParamDecl[];
  setup: FamilySetupStep[];
  checks?: FamilyChecks;
  taskServer?: TaskServerRef;
}
