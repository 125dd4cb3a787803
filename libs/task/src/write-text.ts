/**
 * The normalised task written back as a textproto, in the current dialect (what AndroidEnv 1.3 parses) or
 * the legacy 2021 seed dialect (`adb_call`, `max_num_steps`, `max_duration_sec`). Loading the written text
 * gives the same task (the same content hash): `farm task convert`. What one dialect cannot say (the
 * internal 2021 `mpm` locations, random activities, `wait_for_message` or `log_prefix` in the current
 * dialect; the newer commands in the legacy one) is a TaskConvertError naming the field and the way out.
 */
import { INTERNAL_2021_REGEXPS } from "./normalise-common.ts";
import type { AdbCommand, AppScreen, ApkLocation, LogParsing, SetupStep, SuccessCondition, Task } from "./model.ts";
import { FarmError } from "@farm/errors";

export type TargetDialect = "current" | "legacy";

export class TaskConvertError extends FarmError<"not_expressible"> {
  override readonly name = "TaskConvertError";
  /** The task cannot be expressed in the target dialect: trying again gives the same answer (not retryable). */
  constructor(message: string) {
    super("not_expressible", message);
  }
}

/** A text-format string literal: UTF-8 as is, quotes, backslashes and control characters escaped. */
export function quote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"' || ch === "\\") out += `\\${ch}`;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\t") out += "\\t";
    else if (ch === "\r") out += "\\r";
    else if (c < 0x20 || c === 0x7f) out += `\\${c.toString(8).padStart(3, "0")}`;
    else out += ch;
  }
  return `${out}"`;
}

function bytes(b: Uint8Array): string {
  let out = '"';
  for (const c of b) out += c >= 0x20 && c < 0x7f && c !== 0x22 && c !== 0x5c ? String.fromCharCode(c) : `\\${c.toString(8).padStart(3, "0")}`;
  return `${out}"`;
}

const num = (n: number): string => (Number.isInteger(n) ? String(n) : String(n));

class Out {
  private readonly lines: string[] = [];
  private depth = 0;
  line(s: string): void {
    this.lines.push(`${"  ".repeat(this.depth)}${s}`);
  }
  field(name: string, value: string): void {
    this.line(`${name}: ${value}`);
  }
  strings(name: string, values: readonly string[]): void {
    for (const v of values) this.field(name, quote(v));
  }
  block(name: string, body: () => void): void {
    this.line(`${name} {`);
    this.depth++;
    body();
    this.depth--;
    this.line("}");
  }
  text(): string {
    return `${this.lines.join("\n")}\n`;
  }
}

function appScreen(o: Out, a: AppScreen): void {
  o.field("activity", quote(a.activity));
  o.strings("view_hierarchy_path", a.viewHierarchyPath.map((r) => r.source));
}

function successCondition(o: Out, c: SuccessCondition, to: TargetDialect, where: string): void {
  o.block("success_condition", () => {
    o.field("num_retries", num(c.numRetries));
    const k = c.check;
    if (k.kind === "wait_for_app_screen")
      o.block("wait_for_app_screen", () => {
        o.block("app_screen", () => appScreen(o, k.appScreen));
        o.field("timeout_sec", num(k.timeoutSec));
      });
    else if (k.kind === "check_install")
      o.block("check_install", () => {
        o.field("package_name", quote(k.packageName));
        o.field("timeout_sec", num(k.timeoutSec));
      });
    else {
      if (to === "current") throw new TaskConvertError(`${where}.success_condition.wait_for_message: the current dialect has no wait_for_message; keep this task in the legacy dialect or check with wait_for_app_screen`);
      o.block("wait_for_message", () => {
        o.field("message", quote(k.message.source));
        o.field("timeout_sec", num(k.timeoutSec));
      });
    }
  });
}

function location(o: Out, l: ApkLocation, to: TargetDialect, where: string): void {
  if (l.kind === "filesystem") o.block("filesystem", () => o.field("path", quote(l.declaredPath)));
  else if (l.kind === "blob") {
    if (to === "legacy") throw new TaskConvertError(`${where}.install_apk.blob: the legacy dialect has no blob location; keep the current dialect or use filesystem { path }`);
    o.block("blob", () => o.field("contents", bytes(l.contents)));
  } else {
    if (to === "current") throw new TaskConvertError(`${where}.install_apk.mpm: the current dialect has no mpm location (an internal package store); change it to filesystem { path: "apks/${l.path}" } first`);
    o.block("mpm", () => {
      o.field("package_name", quote(l.packageName));
      o.field("label", quote(l.label));
      o.field("path", quote(l.path));
    });
  }
}

function currentCommand(o: Out, c: AdbCommand, where: string): void {
  switch (c.command) {
    case "install_apk":
      return o.block("install_apk", () => location(o, c.location, "current", where));
    case "start_activity":
      return o.block("start_activity", () => {
        o.field("full_activity", quote(c.fullActivity));
        o.strings("extra_args", c.extraArgs);
        if (c.forceStop) o.field("force_stop", "true");
      });
    case "force_stop":
    case "uninstall_package":
      return o.block(c.command, () => o.field("package_name", quote(c.packageName)));
    case "tap":
      return o.block("tap", () => {
        o.field("x", num(c.x));
        o.field("y", num(c.y));
      });
    case "press_button":
      return o.block("press_button", () => o.field("button", c.button));
    case "start_screen_pinning":
      return o.block("start_screen_pinning", () => o.field("full_activity", quote(c.fullActivity)));
    case "get_current_activity":
    case "get_orientation":
      return o.block(c.command, () => undefined);
    case "push":
      return o.block("push", () => {
        o.field("content", bytes(c.content));
        o.field("path", quote(c.path));
      });
    case "pull":
      return o.block("pull", () => o.field("path", quote(c.path)));
    case "input_text":
      return o.block("input_text", () => o.field("text", quote(c.text)));
    case "settings":
      return o.block("settings", () => {
        o.field("name_space", c.namespace.toUpperCase());
        const a = c.action;
        if (a.verb === "get") o.block("get", () => o.field("key", quote(a.key)));
        else if (a.verb === "put")
          o.block("put", () => {
            o.field("key", quote(a.key));
            o.field("value", quote(a.value));
          });
        else if (a.verb === "delete") o.block("delete_key", () => o.field("key", quote(a.key)));
        else if (a.verb === "reset")
          o.block("reset", () => {
            o.field("package_name", quote(a.packageName));
            if (a.mode) o.field("mode", a.mode.toUpperCase());
          });
        else o.block("list", () => undefined);
      });
    case "generic":
      return o.block("generic", () => o.strings("args", c.args));
    case "package_manager_list":
      return o.block("package_manager", () => o.block("list", () => o.block(c.what, () => undefined)));
    case "package_manager_clear":
      return o.block("package_manager", () =>
        o.block("clear", () => {
          o.field("package_name", quote(c.packageName));
          if (c.userId) o.field("user_id", quote(c.userId));
        }),
      );
    case "package_manager_grant":
      return o.block("package_manager", () =>
        o.block("grant", () => {
          o.field("package_name", quote(c.packageName));
          o.strings("permissions", c.permissions);
        }),
      );
    case "send_broadcast":
      return o.block("send_broadcast", () => {
        o.field("action", quote(c.action));
        o.field("component", quote(c.component));
      });
    case "dumpsys":
      return o.block("dumpsys", () => {
        const d = c.options;
        if (d.service) o.field("service", quote(d.service));
        o.strings("args", d.args);
        if (d.listOnly) o.field("list_only", "true");
        if (d.timeoutSec) o.field("timeout_sec", num(d.timeoutSec));
        if (d.timeoutMs) o.field("timeout_ms", num(d.timeoutMs));
        if (d.proto) o.field("proto", "true");
        if (d.priority) o.field("priority", d.priority);
        o.strings("skip_services", d.skipServices);
      });
  }
}

const ROTATIONS = ["PORTRAIT_0", "LANDSCAPE_90", "PORTRAIT_180", "LANDSCAPE_270"];

/** The 2021 `adb_call` form of a current command, when there is one (task-format.md §5.3 read backwards). */
function legacyCommand(o: Out, c: AdbCommand, where: string): void {
  const no = (what: string) => new TaskConvertError(`${where}: ${what} has no form in the legacy (2021) dialect; keep this task in the current dialect`);
  switch (c.command) {
    case "install_apk":
      return o.block("install_apk", () => location(o, c.location, "legacy", where));
    case "start_activity":
      if (!c.forceStop) throw no("start_activity without force_stop (the 2021 runtime always force-stopped)");
      return o.block("start_activity", () => {
        o.field("full_activity", quote(c.fullActivity));
        o.strings("extra_args", c.extraArgs);
      });
    case "force_stop":
    case "uninstall_package":
      return o.block(c.command, () => o.field("package_name", quote(c.packageName)));
    case "tap":
      return o.block("tap", () => {
        o.field("x", num(c.x));
        o.field("y", num(c.y));
      });
    case "press_button":
      if (c.button === "ENTER") throw no("press_button ENTER");
      return o.block("press_button", () => o.field("button", c.button));
    case "start_screen_pinning":
      return o.block("start_screen_pinning", () => o.field("full_activity", quote(c.fullActivity)));
    case "package_manager_clear":
      if (c.userId) throw no("package_manager clear with a user_id");
      return o.block("clear_cache", () => o.field("package_name", quote(c.packageName)));
    case "package_manager_grant":
      return o.block("grant_permissions", () => {
        o.field("package_name", quote(c.packageName));
        o.strings("permissions", c.permissions);
      });
    case "settings": {
      const a = c.action;
      if (a.verb === "put" && c.namespace === "system" && a.key === "user_rotation" && /^[0-3]$/.test(a.value)) return o.block("rotate", () => o.field("orientation", ROTATIONS[Number(a.value)]!));
      if (a.verb === "put" && c.namespace === "secure" && a.key === "enabled_accessibility_services") return o.block("start_accessibility_service", () => o.field("full_service", quote(a.value)));
      throw no(`settings ${c.namespace} ${a.verb}${"key" in a ? ` ${a.key}` : ""}`);
    }
    case "generic": {
      // The mapping of start_intent: shell am start -a ACTION [-d URI] [PACKAGE].
      const g = c.args;
      if (g[0] === "shell" && g[1] === "am" && g[2] === "start" && g[3] === "-a" && g.length >= 5 && g.length <= 8) {
        const rest = g.slice(5);
        const data = rest[0] === "-d" ? rest[1] : undefined;
        const pkgs = data !== undefined ? rest.slice(2) : rest;
        if (pkgs.length <= 1 && (data === undefined || data !== "") && (pkgs[0] === undefined || pkgs[0] !== "")) {
          return o.block("start_intent", () => {
            if (data !== undefined) o.field("data_uri", quote(data));
            o.field("action", quote(g[4]!));
            if (pkgs[0] !== undefined) o.field("package_name", quote(pkgs[0]));
          });
        }
      }
      throw no("generic");
    }
    default:
      throw no(c.command);
  }
}

function step(o: Out, s: SetupStep, to: TargetDialect, where: string): void {
  const a = s.action;
  if (a?.kind === "sleep") o.block("sleep", () => o.field("time_sec", num(a.timeSec)));
  else if (a?.kind === "adb") {
    if (to === "current")
      o.block("adb_request", () => {
        currentCommand(o, a.request.cmd, where);
        if (a.request.timeoutSec) o.field("timeout_sec", num(a.request.timeoutSec));
      });
    else {
      if (a.request.timeoutSec) throw new TaskConvertError(`${where}: a per-request timeout_sec has no form in the legacy (2021) dialect; keep this task in the current dialect`);
      o.block("adb_call", () => legacyCommand(o, a.request.cmd, where));
    }
  } else if (a) {
    if (to === "current") throw new TaskConvertError(`${where}: ${a.kind} (2021 dialect) has no form in the current dialect; keep this task in the legacy dialect`);
    o.block("adb_call", () => {
      if (a.kind === "start_random_activity")
        o.block("start_random_activity", () => {
          o.strings("activity_list", a.activities);
          o.strings("extra_args", a.extraArgs);
          o.field("timeout_sec", num(a.timeoutSec));
        });
      else o.block(a.kind, () => undefined);
    });
  }
  if (s.successCondition) successCondition(o, s.successCondition, to, where);
}

const ANIMATION_KEYS = ["window_animation_scale", "transition_animation_scale", "animator_duration_scale"];

/** Legacy `disable_animations` became these three steps on one line (the check, if any, on the last). */
function isDisableAnimations(run: readonly SetupStep[]): boolean {
  if (run.length !== 3 || run.some((s) => s.line !== run[0]!.line) || run[0]!.successCondition || run[1]!.successCondition) return false;
  return run.every((s, i) => {
    const a = s.action;
    if (a?.kind !== "adb" || a.request.timeoutSec !== 0) return false;
    const c = a.request.cmd;
    return c.command === "settings" && c.namespace === "global" && c.action.verb === "put" && c.action.key === ANIMATION_KEYS[i] && c.action.value === "0.0";
  });
}

function steps(o: Out, field: string, list: readonly SetupStep[], to: TargetDialect): void {
  for (let i = 0; i < list.length; i++) {
    const run = list.slice(i, i + 3);
    if (to === "legacy" && isDisableAnimations(run)) {
      o.block(field, () => {
        o.block("adb_call", () => o.block("disable_animations", () => undefined));
        if (run[2]!.successCondition) successCondition(o, run[2]!.successCondition, to, `${field}[${i + 2}]`);
      });
      i += 2;
      continue;
    }
    o.block(field, () => step(o, list[i]!, to, `${field}[${i}]`));
  }
}

function logParsing(o: Out, l: LogParsing, to: TargetDialect): void {
  if (l.messagePrefix) throw new TaskConvertError(`log_prefix (internal 2021 dialect) has no form in the ${to === "current" ? "current" : "2021 seed"} dialect; keep this task as it is`);
  o.block("log_parsing_config", () => {
    o.strings("filters", l.filters);
    o.block("log_regexps", () => {
      if (l.score) o.field("score", quote(l.score.source));
      o.strings("reward", l.reward.map((r) => r.source));
      o.strings("episode_end", l.episodeEnd.map((r) => r.source));
      o.strings("extra", l.extra.map((r) => r.source));
      o.strings("json_extra", l.jsonExtra.map((r) => r.source));
      for (const e of l.rewardEvent)
        o.block("reward_event", () => {
          o.field("event", quote(e.event.source));
          o.field("reward", num(e.reward));
        });
    });
  });
}

/**
 * The early-2021 internal dialect's `log_tag` / `log_prefix` when the log parsing is exactly what that runtime
 * builds from them (its fixed regexes), else undefined.
 */
function internalLogFields(l: LogParsing): { logTag: string; logPrefix: string } | undefined {
  const re = INTERNAL_2021_REGEXPS;
  const one = (rs: readonly { source: string }[], src: string) => rs.length === 1 && rs[0]!.source === src;
  if (l.filters[0] !== "AndroidRLTask:V" || l.filters.length > 2 || l.rewardEvent.length > 0) return undefined;
  if (l.score?.source !== re.score || !one(l.reward, re.reward) || !one(l.episodeEnd, re.episodeEnd) || !one(l.extra, re.extra) || !one(l.jsonExtra, re.jsonExtra)) return undefined;
  const tag = l.filters[1];
  if (tag !== undefined && !tag.endsWith(":V")) return undefined;
  return { logTag: tag ? tag.slice(0, -2) : "", logPrefix: l.messagePrefix?.source ?? "" };
}

/** The task as a textproto of `to`; throws TaskConvertError for content that dialect cannot hold. */
export function taskToText(task: Task, to: TargetDialect, header?: string): string {
  const o = new Out();
  if (header) for (const l of header.split("\n")) o.line(`# ${l}`);
  // Legacy: the internal early-2021 form when the log parsing is that runtime's fixed one (log_tag, log_prefix).
  const internal = to === "legacy" ? internalLogFields(task.logParsing) : undefined;
  if (internal) o.line("# proto-file: google3/third_party/py/android_env/proto/task.proto");
  o.field("id", quote(task.id));
  if (task.name) o.field("name", quote(task.name));
  if (task.description) o.field("description", quote(task.description));
  if (to === "legacy") {
    if (task.packageName) o.field("package_name", quote(task.packageName));
    if (task.fullActivityName) o.field("full_activity_name", quote(task.fullActivityName));
  }
  steps(o, "setup_steps", task.setupSteps, to);
  steps(o, "reset_steps", task.resetSteps, to);
  if (task.expectedAppScreen) o.block("expected_app_screen", () => appScreen(o, task.expectedAppScreen!));
  o.field(to === "current" ? "max_episode_sec" : "max_duration_sec", num(task.maxEpisodeSec));
  if (internal) {
    if (task.maxEpisodeSteps > 0) throw new TaskConvertError("max_episode_steps: the early-2021 dialect of this task (log_tag, fixed log regexes) has no step limit; keep the current dialect");
    if (internal.logTag) o.field("log_tag", quote(internal.logTag));
    if (internal.logPrefix) o.field("log_prefix", quote(internal.logPrefix));
  } else {
    o.field(to === "current" ? "max_episode_steps" : "max_num_steps", num(task.maxEpisodeSteps));
    logParsing(o, task.logParsing, to);
  }
  for (const e of task.extrasSpec)
    o.block("extras_spec", () => {
      o.field("name", quote(e.name));
      for (const d of e.shape) o.field("shape", num(d));
      o.field("dtype", e.dtype);
    });
  return o.text();
}
