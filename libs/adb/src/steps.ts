/**
 * The step command table (task-format.md §8.2, current dialect; legacy commands arrive mapped onto these
 * by the task loader, §5.3). One handler per `AdbCommand` kind; the `Record` type makes the compiler
 * check that none is missing.
 */
import path from "node:path";
import { randomBytes } from "node:crypto";
import { PassThrough } from "node:stream";
import { findApk, type AdbCommand, type AdbCommandName, type ApkLocation } from "@farm/task";
import { shellExec, stateCall, syncCall, type CallOutcome, type DeviceCtx } from "./exec.ts";
import { parseCurrentActivity, parseResumedActivity, stackListUnavailable, parseOrientation, parsePmInstall, parsePmList, findPinnableTask, amStartFailed, visibleLines, looksLikeDeviceError } from "./parsers.ts";
import { shJoin, shQuote, shSplit, ShellSyntaxError } from "@farm/shell-words";
import { inputTextLine, inputTextPieces, quoteExtraArgs } from "./quote.ts";
import { fail, ok, shellToStep } from "./result.ts";
import type { ShellResult, StepResult } from "./types.ts";
import { checkActivity, checkComponent, checkDevicePath, checkIdentifier, checkInputText, checkPackage } from "./validate.ts";

/** What a handler gets: the device, its deadline, and helpers that spend the time left. */
export interface StepCtx {
  readonly dev: DeviceCtx;
  /** Absolute deadline (performance.now() clock). */
  readonly deadline: number;
  readonly apkDirs: readonly string[];
  remainingMs(): number;
  sh(commandLine: string, op?: string): Promise<ShellResult>;
  /** A sync-service call (push, pull, stat) within the step's deadline. */
  sync<T>(op: string, fn: Parameters<typeof syncCall<T>>[3]): Promise<CallOutcome<T>>;
}

export function createStepCtx(dev: DeviceCtx, timeoutMs: number, apkDirs: readonly string[]): StepCtx {
  const deadline = performance.now() + timeoutMs;
  const remainingMs = () => Math.max(0, Math.floor(deadline - performance.now()));
  return {
    dev,
    deadline,
    apkDirs,
    remainingMs,
    sh: (cl, op = "shell") => shellExec(dev, cl, remainingMs(), op),
    sync: (op, fn) => syncCall(dev, op, remainingMs(), fn),
  };
}

type Handler<K extends AdbCommandName> = (cmd: Extract<AdbCommand, { command: K }>, ctx: StepCtx) => Promise<StepResult>;
export type StepHandlers = { [K in AdbCommandName]: Handler<K> };

const precondition = (msg: string) => fail("failed_precondition", msg);

function outcomeError<T>(r: CallOutcome<T>): StepResult | undefined {
  return r.ok ? undefined : fail(r.status as Exclude<StepResult["status"], "ok">, r.message);
}

/** Push bytes (or a host file) to a device path over the sync service. */
export async function pushContent(ctx: StepCtx, content: Uint8Array | string, devicePath: string, op = "push"): Promise<StepResult> {
  const r = await ctx.sync(op, (sync) => {
    let src: string | PassThrough;
    if (typeof content === "string") src = content;
    else {
      const pt = new PassThrough();
      pt.end(Buffer.from(content.buffer, content.byteOffset, content.byteLength));
      src = pt;
    }
    return Promise.resolve(sync.push(src, devicePath)).then(
      (transfer) =>
        new Promise<void>((resolve, reject) => {
          transfer.once("end", () => resolve());
          transfer.once("error", (e: unknown) => reject(e));
        }),
    );
  });
  return outcomeError(r) ?? ok();
}

export async function pullContent(ctx: StepCtx, devicePath: string): Promise<CallOutcome<Buffer>> {
  // adbkit ends a pull transfer before it reports the device's FAIL, so a missing file would read as
  // empty content: stat first and treat "no such file" as the device's answer.
  const st = await ctx.sync("pull:stat", (sync) =>
    sync.stat(devicePath).then(
      (s) => ({ exists: true, isFile: s.isFile() }),
      (e: { code?: string; message?: string }) => {
        if (e?.code === "ENOENT" || /ENOENT|No such file/i.test(String(e?.message))) return { exists: false, isFile: false };
        throw e;
      },
    ),
  );
  if (!st.ok) return st;
  if (!st.value.exists) return { ok: false, status: "internal_error", message: `no such file on the device: ${devicePath}`, durationMs: st.durationMs };
  if (!st.value.isFile) return { ok: false, status: "internal_error", message: `not a regular file on the device: ${devicePath}`, durationMs: st.durationMs };
  return ctx.sync("pull", (sync) =>
    Promise.resolve(sync.pull(devicePath)).then(
      (transfer) =>
        new Promise<Buffer>((resolve, reject) => {
          const chunks: Buffer[] = [];
          let failed = false;
          transfer.on("data", (b: Buffer) => chunks.push(b));
          transfer.once("error", (e: unknown) => {
            failed = true;
            reject(e);
          });
          // The FAIL of a transfer can follow its end; give it a turn before accepting the content.
          transfer.once("end", () => setImmediate(() => failed || resolve(Buffer.concat(chunks))));
        }),
    ),
  );
}

function resolveApk(loc: ApkLocation, apkDirs: readonly string[]): { ok: true; src: string | Uint8Array; name: string } | { ok: false; result: StepResult } {
  switch (loc.kind) {
    case "filesystem": {
      if (loc.path === "") return { ok: false, result: precondition("install_apk: empty filesystem path") };
      const found = findApk(loc, apkDirs);
      if (!found) return { ok: false, result: fail("internal_error", `install_apk: APK not found on this host at ${loc.path}`) };
      return { ok: true, src: found, name: path.basename(found) };
    }
    case "blob":
      if (loc.contents.byteLength === 0) return { ok: false, result: precondition("install_apk: empty blob") };
      return { ok: true, src: loc.contents, name: "blob.apk" };
    case "mpm": {
      const name = path.basename(loc.path);
      const found = findApk(loc, apkDirs);
      if (found) return { ok: true, src: found, name };
      return {
        ok: false,
        result: precondition(
          `install_apk: mpm location ${loc.packageName}@${loc.label} is an internal package store the farm cannot reach; put ${JSON.stringify(name)} in an APK folder (searched: ${apkDirs.length ? apkDirs.join(", ") : "none configured"})`,
        ),
      };
    }
  }
}

/** push to a temp file, `pm install -r -t -g <tmp>`, remove the temp file. */
export async function installApk(ctx: StepCtx, loc: ApkLocation, flags = ["-r", "-t", "-g"]): Promise<StepResult> {
  const apk = resolveApk(loc, ctx.apkDirs);
  if (!apk.ok) return apk.result;
  const tmp = `${ctx.dev.cfg.deviceTmpDir}/farm-${randomBytes(6).toString("hex")}.apk`;
  const pushed = await pushContent(ctx, apk.src, tmp, "install:push");
  if (pushed.status !== "ok") return { ...pushed, message: `install_apk: could not copy ${apk.name} to the device: ${pushed.message}` };
  const r = await ctx.sh(`pm install ${shJoin(flags)} ${shQuote(tmp)}`, "install:pm");
  // Best effort clean-up even after a failure, with its own small budget.
  await shellExec(ctx.dev, `rm -f ${shQuote(tmp)}`, Math.min(ctx.dev.cfg.queryTimeoutMs, 5000), "install:rm");
  if (r.status !== "ok") return shellToStep(r);
  const parsed = parsePmInstall(r.stdout);
  if (!parsed.ok) return fail("internal_error", `install_apk: ${apk.name} could not be installed: ${parsed.reason}`, r.stdout);
  return ok(r.stdout);
}

async function listPackages(ctx: StepCtx): Promise<{ ok: true; items: string[]; output: string } | { ok: false; result: StepResult }> {
  const r = await ctx.sh("pm list packages", "pm:list");
  if (r.status !== "ok") return { ok: false, result: shellToStep(r) };
  return { ok: true, items: parsePmList(r.stdout, "package:"), output: r.stdout };
}

/** `am stack list` filtered like `grep -E visible=true`, then the text of the last `{…}`. */
export async function currentActivity(ctx: StepCtx): Promise<StepResult> {
  const r = await ctx.sh("am stack list", "am:stack-list");
  if (r.status !== "ok") return shellToStep(r);
  if (stackListUnavailable(r.stdout)) {
    const d = await ctx.sh("dumpsys activity activities", "dumpsys:activities");
    if (d.status !== "ok") return shellToStep(d);
    const act = parseResumedActivity(d.stdout);
    if (act === undefined) return fail("internal_error", "get_current_activity: `am stack list` is unavailable and `dumpsys activity activities` names no resumed activity", r.stdout);
    return ok(d.stdout, { kind: "current_activity", fullActivity: act });
  }
  const visible = visibleLines(r.stdout).join("\n");
  if (visible.trim() === "") return fail("internal_error", "get_current_activity: no visible task in `am stack list`", r.stdout);
  const act = parseCurrentActivity(visible);
  if (act === undefined) return fail("internal_error", "get_current_activity: could not extract the activity from `am stack list`", visible);
  return ok(visible, { kind: "current_activity", fullActivity: act });
}

async function uninstall(ctx: StepCtx, pkg: string): Promise<StepResult> {
  const err = checkPackage(pkg);
  if (err) return precondition(`uninstall_package: ${err}`);
  const listed = await listPackages(ctx);
  if (!listed.ok) return listed.result;
  // Farm rule (task-format.md §7.10.7): an absent package is already uninstalled.
  if (!listed.items.includes(pkg)) return { ...ok(""), message: `${pkg} is not installed; nothing to do` };
  const r = await ctx.sh(`pm uninstall ${shQuote(pkg)}`, "pm:uninstall");
  if (r.status !== "ok") return shellToStep(r);
  if (!/Success/.test(r.stdout)) return fail("internal_error", `uninstall_package: ${pkg}: ${r.stdout.trim() || "no output"}`, r.stdout);
  return ok(r.stdout);
}

/** A shell command whose output reporting an error turns into internal_error. */
async function shChecked(ctx: StepCtx, what: string, cl: string, op: string): Promise<StepResult> {
  const r = await ctx.sh(cl, op);
  if (r.status !== "ok") return shellToStep(r);
  if (looksLikeDeviceError(r.stdout)) return fail("internal_error", `${what}: ${r.stdout.trim()}`, r.stdout);
  return ok(r.stdout);
}

const SUPPORTED_GENERIC = ["shell", "install", "uninstall", "get-state", "get-serialno", "logcat"];

export const stepHandlers: StepHandlers = {
  install_apk: (cmd, ctx) => installApk(ctx, cmd.location),

  async start_activity(cmd, ctx) {
    const err = checkActivity(cmd.fullActivity);
    if (err) return precondition(`start_activity: ${err}`);
    let extra: string;
    try {
      extra = quoteExtraArgs(cmd.extraArgs).commandLine;
    } catch (e) {
      if (e instanceof ShellSyntaxError) return precondition(`start_activity: extra_args: ${e.message}`);
      throw e;
    }
    const cl = `am start ${cmd.forceStop ? "-S " : ""}-W -n ${shQuote(cmd.fullActivity)}${extra ? " " + extra : ""}`;
    const r = await ctx.sh(cl, "am:start");
    if (r.status !== "ok") return shellToStep(r);
    if (amStartFailed(r.stdout)) return fail("internal_error", `start_activity ${cmd.fullActivity} failed: ${r.stdout.trim()}`, r.stdout);
    return ok(r.stdout, { kind: "start_activity", fullActivity: cmd.fullActivity });
  },

  async force_stop(cmd, ctx) {
    const err = checkPackage(cmd.packageName);
    if (err) return precondition(`force_stop: ${err}`);
    return shellToStep(await ctx.sh(`am force-stop ${shQuote(cmd.packageName)}`, "am:force-stop"));
  },

  async tap(cmd, ctx) {
    if (!Number.isInteger(cmd.x) || !Number.isInteger(cmd.y) || cmd.x < 0 || cmd.y < 0)
      return precondition(`tap: coordinates must be non-negative integers, got (${cmd.x}, ${cmd.y})`);
    return shellToStep(await ctx.sh(`input tap ${cmd.x} ${cmd.y}`, "input:tap"));
  },

  async press_button(cmd, ctx) {
    const code = { HOME: "KEYCODE_HOME", BACK: "KEYCODE_BACK", ENTER: "KEYCODE_ENTER" }[cmd.button];
    if (!code) return precondition(`press_button: unknown button ${JSON.stringify(cmd.button)}`);
    return shellToStep(await ctx.sh(`input keyevent ${code}`, "input:keyevent"));
  },

  async start_screen_pinning(cmd, ctx) {
    const err = checkActivity(cmd.fullActivity);
    if (err) return precondition(`start_screen_pinning: ${err}`);
    const list = await ctx.sh("am stack list", "am:stack-list");
    if (list.status !== "ok") return shellToStep(list);
    const id = findPinnableTask(list.stdout, cmd.fullActivity);
    if (id === undefined || id === "") return fail("internal_error", `start_screen_pinning: no visible task for ${cmd.fullActivity}`, list.stdout);
    return shChecked(ctx, "start_screen_pinning", `am task lock ${shQuote(id)}`, "am:task-lock");
  },

  uninstall_package: (cmd, ctx) => uninstall(ctx, cmd.packageName),

  get_current_activity: (_cmd, ctx) => currentActivity(ctx),

  async push(cmd, ctx) {
    const err = checkDevicePath(cmd.path);
    if (err) return precondition(`push: ${err}`);
    return pushContent(ctx, cmd.content, cmd.path);
  },

  async pull(cmd, ctx) {
    const err = checkDevicePath(cmd.path);
    if (err) return precondition(`pull: ${err}`);
    const r = await pullContent(ctx, cmd.path);
    if (!r.ok) return fail(r.status as "adb_error", `pull: ${r.message}`);
    return ok("", { kind: "pull", content: new Uint8Array(r.value) });
  },

  async input_text(cmd, ctx) {
    const bad = checkInputText(cmd.text);
    if (bad) return precondition(bad);
    // Typed in pieces that fit one adb request on any device (the wire format bounds a request's length).
    let last: StepResult | undefined;
    for (const piece of inputTextPieces(cmd.text)) {
      last = shellToStep(await ctx.sh(inputTextLine(piece), "input:text"));
      if (last.status !== "ok") return last;
    }
    return last!;
  },

  async settings(cmd, ctx) {
    const ns = cmd.namespace as string;
    if (ns !== "system" && ns !== "secure" && ns !== "global") return precondition(`settings: unknown namespace ${JSON.stringify(ns)}`);
    const a = cmd.action;
    let cl: string;
    switch (a.verb) {
      case "get":
        if (a.key === "") return precondition("settings get: key is empty");
        cl = `settings get ${ns} ${shQuote(a.key)}`;
        break;
      case "put":
        if (a.key === "") return precondition("settings put: key is empty");
        if (a.value === "") return precondition("settings put: value is empty");
        cl = `settings put ${ns} ${shQuote(a.key)} ${shQuote(a.value)}`;
        break;
      case "delete":
        if (a.key === "") return precondition("settings delete: key is empty");
        cl = `settings delete ${ns} ${shQuote(a.key)}`;
        break;
      case "reset": {
        const target = a.packageName !== "" ? a.packageName : a.mode;
        if (target === "") return precondition("settings reset: needs a package name or a mode");
        if (a.packageName !== "") {
          const err = checkPackage(a.packageName);
          if (err) return precondition(`settings reset: ${err}`);
        }
        cl = `settings reset ${ns} ${shQuote(target)}`;
        break;
      }
      case "list":
        cl = `settings list ${ns}`;
        break;
      default:
        return fail("unknown_command", `settings: unknown verb ${JSON.stringify((a as { verb?: unknown }).verb)}`);
    }
    return shChecked(ctx, `settings ${a.verb}`, cl, `settings:${a.verb}`);
  },

  async generic(cmd, ctx) {
    const [head, ...rest] = cmd.args;
    if (head === undefined || head === "") return precondition("generic: args are empty");
    let words: string[];
    try {
      // adb CLI semantics: the remaining argv joined with spaces is re-parsed by the device shell;
      // quotes are removed here, without expansion or operators, and each word is quoted again.
      words = shSplit(rest.join(" "));
    } catch (e) {
      if (e instanceof ShellSyntaxError) return precondition(`generic: ${e.message}`);
      throw e;
    }
    switch (head) {
      case "shell":
        if (words.length === 0) return precondition("generic: `shell` without a command (interactive shells are not steps)");
        return shellToStep(await ctx.sh(shJoin(words), "generic:shell"));
      case "logcat":
        return shellToStep(await ctx.sh(shJoin(["logcat", ...words]), "generic:logcat"));
      case "install": {
        const file = words[words.length - 1];
        const flags = words.slice(0, -1);
        if (!file) return precondition("generic install: no APK path");
        if (flags.some((f) => !/^-[a-zA-Z]$/.test(f))) return precondition(`generic install: unsupported flags ${flags.join(" ")}`);
        return installApk(ctx, { kind: "filesystem", path: file, declaredPath: file }, flags.length ? flags : ["-r"]);
      }
      case "uninstall": {
        const pkg = words[words.length - 1] ?? "";
        return uninstall(ctx, pkg);
      }
      case "get-state":
      case "get-serialno": {
        if (head === "get-serialno") return ok(ctx.dev.serial);
        const r = await stateCall(ctx.dev, ctx.remainingMs());
        if (!r.ok) return fail(r.status as "adb_error", r.message);
        return ok(r.value);
      }
      default:
        return fail("unknown_command", `generic: adb command ${JSON.stringify(head)} is not supported by the farm driver (supported: ${SUPPORTED_GENERIC.join(", ")})`);
    }
  },

  async package_manager_list(cmd, ctx) {
    const what = cmd.what;
    const prefix = ({ features: "feature:", libraries: "library:", packages: "package:" } as const)[what];
    if (!prefix) return precondition(`package_manager list: unknown kind ${JSON.stringify(what)}`);
    const r = await ctx.sh(`pm list ${what}`, `pm:list-${what}`);
    if (r.status !== "ok") return shellToStep(r);
    return ok(r.stdout, { kind: "list", items: parsePmList(r.stdout, prefix) });
  },

  async package_manager_clear(cmd, ctx) {
    const err = checkPackage(cmd.packageName);
    if (err) return precondition(`package_manager clear: ${err}`);
    if (cmd.userId !== "" && !/^[0-9]+$/.test(cmd.userId)) return precondition(`package_manager clear: invalid user id ${JSON.stringify(cmd.userId)}`);
    const cl = `pm clear ${cmd.userId !== "" ? `-f ${cmd.userId} ` : ""}${shQuote(cmd.packageName)}`;
    const r = await ctx.sh(cl, "pm:clear");
    if (r.status !== "ok") return shellToStep(r);
    if (/^(Failed|Error)/m.test(r.stdout) || looksLikeDeviceError(r.stdout)) return fail("internal_error", `pm clear ${cmd.packageName}: ${r.stdout.trim()}`, r.stdout);
    return ok(r.stdout);
  },

  async package_manager_grant(cmd, ctx) {
    const err = checkPackage(cmd.packageName);
    if (err) return precondition(`package_manager grant: ${err}`);
    if (cmd.permissions.length === 0) return precondition("package_manager grant: no permissions");
    for (const p of cmd.permissions) {
      const perr = checkIdentifier("permission", p);
      if (perr) return precondition(`package_manager grant: ${perr}`);
    }
    let out = "";
    for (const p of cmd.permissions) {
      const r = await shChecked(ctx, `pm grant ${cmd.packageName} ${p}`, `pm grant ${shQuote(cmd.packageName)} ${shQuote(p)}`, "pm:grant");
      out += r.output;
      if (r.status !== "ok") return { ...r, output: out };
    }
    return ok(out);
  },

  async get_orientation(_cmd, ctx) {
    const r = await ctx.sh("dumpsys input", "dumpsys:input");
    if (r.status !== "ok") return shellToStep(r);
    const o = parseOrientation(r.stdout);
    if (o === undefined) return fail("internal_error", "get_orientation: no SurfaceOrientation/InputDeviceOrientation in `dumpsys input`", r.stdout);
    return ok(r.stdout, { kind: "orientation", orientation: o });
  },

  async send_broadcast(cmd, ctx) {
    if (cmd.action === "") return precondition("send_broadcast: action is empty");
    const aerr = checkIdentifier("broadcast action", cmd.action);
    if (aerr) return precondition(`send_broadcast: ${aerr}`);
    if (cmd.component !== "") {
      const cerr = checkComponent(cmd.component);
      if (cerr) return precondition(`send_broadcast: component: ${cerr}`);
    }
    const cl = `am broadcast -a ${shQuote(cmd.action)}${cmd.component !== "" ? ` -n ${shQuote(cmd.component)}` : ""}`;
    return shChecked(ctx, "send_broadcast", cl, "am:broadcast");
  },

  async dumpsys(cmd, ctx) {
    const o = cmd.options;
    if (o.timeoutSec < 0 || o.timeoutMs < 0) return precondition("dumpsys: negative timeout");
    const argv: string[] = ["dumpsys"];
    if (o.listOnly) argv.push("-l");
    if (o.timeoutSec > 0) argv.push("-t", String(o.timeoutSec));
    else if (o.timeoutMs > 0) argv.push("-T", String(o.timeoutMs));
    if (o.priority !== "") argv.push("--priority", o.priority);
    if (!o.listOnly) {
      if (o.skipServices.length > 0) argv.push("--skip", o.skipServices.join(","));
      else if (o.service !== "") argv.push(o.service);
      if (o.skipServices.length === 0) argv.push(...o.args);
    }
    if (o.proto) argv.push("--proto");
    return shellToStep(await ctx.sh(shJoin(argv), "dumpsys"));
  },
};

/** Looks a handler up by name; unknown names (e.g. from a newer task file) get `unknown_command`. */
export function handlerFor(name: string): ((cmd: AdbCommand, ctx: StepCtx) => Promise<StepResult>) | undefined {
  return Object.prototype.hasOwnProperty.call(stepHandlers, name)
    ? (stepHandlers[name as AdbCommandName] as (cmd: AdbCommand, ctx: StepCtx) => Promise<StepResult>)
    : undefined;
}
