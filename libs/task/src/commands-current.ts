/** Current dialect: `adb_request` → AdbCommand (task-format.md §5). */
import { locateFilesystemApk } from "./apk.ts";
import { type Checker, num, obj, type Obj, str, strings } from "./checker.ts";
import { quote } from "./raw-checks.ts";
import type { AdbCommand, ApkLocation, SettingsNamespace, SettingsVerb, StepAction } from "./model.ts";
import { isActivityName } from "./names.ts";

export interface StepEnv {
  ck: Checker;
  taskDir: string;
  apkDirs: readonly string[];
}

/**
 * `install_apk.filesystem.path` as written → resolved location (missing files are a warning: they may arrive
 * before the run). `install` is the install_apk message, `p` its field path.
 */
export function filesystemLocation(env: StepEnv, install: Obj, p: string): ApkLocation | undefined {
  const declared = str(obj(install.filesystem)?.path);
  const path = `${p}.filesystem.path`;
  if (declared === "") {
    env.ck.fail("bad_apk", path, "empty APK path", "write the APK file's path, relative to the task file's folder, e.g. path: \"apks/app.apk\"");
    return undefined;
  }
  const { path: resolved, found, refused } = locateFilesystemApk(declared, env.taskDir, env.apkDirs);
  if (refused) {
    env.ck.fail("bad_apk", path, `APK path ${quote(declared)} refused: ${refused}`, "write a path relative to the task file's folder (e.g. \"apks/app.apk\") or put the APK in an APK folder (--apk-dir)");
    return undefined;
  }
  if (!found) env.ck.warn(path, `APK ${quote(declared)} not found next to the task file or in an APK folder`);
  return { kind: "filesystem", path: resolved, declaredPath: declared };
}

export function currentStepPayload(env: StepEnv) {
  return (step: Obj, path: string): StepAction[] => {
    const { ck } = env;
    if (step.step === "sleep") return [sleep(ck, step, path)];
    if (step.step !== "adb_request") return [];
    const p = `${path}.adb_request`;
    const req = obj(step.adb_request) ?? {};
    const timeoutSec = num(req.timeout_sec);
    if (timeoutSec < 0) ck.fail("negative_timeout", `${p}.timeout_sec`, `negative timeout ${timeoutSec}`, "use seconds > 0, or 0 for the default deadline");
    const cmd = currentCommand(env, req, p);
    return cmd ? [{ kind: "adb", request: { timeoutSec, cmd } }] : [];
  };
}

function currentCommand(env: StepEnv, req: Obj, base: string): AdbCommand | undefined {
  const { ck } = env;
  const name = str(req.command);
  if (name === "") {
    ck.fail("empty_command", base, "adb_request names no command", "add one command such as start_activity { … } or delete the step");
    return undefined;
  }
  const c = obj(req[name]) ?? {};
  const p = `${base}.${name}`;
  switch (name) {
    case "install_apk": {
      let location: ApkLocation | undefined;
      if (c.location === "filesystem") location = filesystemLocation(env, c, p);
      else if (c.location === "blob") location = { kind: "blob", contents: new Uint8Array(obj(c.blob)?.contents as Uint8Array ?? []) };
      else ck.fail("bad_apk", p, "install_apk has no location", "add filesystem { path: \"apks/app.apk\" }");
      return location && { command: "install_apk", location };
    }
    case "start_activity":
      return {
        command: "start_activity",
        fullActivity: ck.activity(`${p}.full_activity`, str(c.full_activity)),
        extraArgs: strings(c.extra_args),
        forceStop: c.force_stop === true,
      };
    case "force_stop":
      return { command: "force_stop", packageName: ck.packageName(`${p}.package_name`, str(c.package_name)) };
    case "tap":
      return tap(ck, c, p);
    case "press_button":
      return { command: "press_button", button: (str(c.button) || "HOME") as "HOME" | "BACK" | "ENTER" };
    case "start_screen_pinning":
      return { command: "start_screen_pinning", fullActivity: ck.activity(`${p}.full_activity`, str(c.full_activity)) };
    case "uninstall_package":
      return { command: "uninstall_package", packageName: ck.packageName(`${p}.package_name`, str(c.package_name)) };
    case "get_current_activity":
      return { command: "get_current_activity" };
    case "get_orientation":
      return { command: "get_orientation" };
    case "push":
      return { command: "push", content: new Uint8Array((c.content as Uint8Array | undefined) ?? []), path: ck.nonEmpty(`${p}.path`, str(c.path), "device path") };
    case "pull":
      return { command: "pull", path: ck.nonEmpty(`${p}.path`, str(c.path), "device path") };
    case "input_text":
      return { command: "input_text", text: ck.nonEmpty(`${p}.text`, str(c.text), "text") };
    case "settings":
      return settings(ck, c, p);
    case "generic": {
      const args = strings(c.args);
      if (args.length === 0) ck.fail("bad_value", `${p}.args`, "generic request without arguments", "list the adb arguments, e.g. args: [\"shell\", \"echo\", \"hi\"]");
      return { command: "generic", args };
    }
    case "package_manager":
      return packageManager(ck, c, p);
    case "send_broadcast": {
      const component = str(c.component);
      if (component !== "" && !isActivityName(component))
        ck.fail("bad_activity", `${p}.component`, `${JSON.stringify(component)} is not a component name of the form pkg/Class`, "write \"com.example.app/.Receiver\" or leave it out");
      return { command: "send_broadcast", action: ck.nonEmpty(`${p}.action`, str(c.action), "broadcast action"), component };
    }
    case "dumpsys": {
      const timeoutSec = num(c.timeout_sec);
      const timeoutMs = num(c.timeout_ms);
      if (timeoutSec < 0) ck.fail("negative_timeout", `${p}.timeout_sec`, `negative timeout ${timeoutSec}`, "use seconds >= 0");
      if (timeoutMs < 0) ck.fail("negative_timeout", `${p}.timeout_ms`, `negative timeout ${timeoutMs}`, "use milliseconds >= 0");
      const priority = str(c.priority);
      return {
        command: "dumpsys",
        options: {
          service: str(c.service),
          args: strings(c.args),
          listOnly: c.list_only === true,
          timeoutSec,
          timeoutMs,
          proto: c.proto === true,
          priority: (priority === "UNSET" ? "" : priority) as "" | "NORMAL" | "HIGH" | "CRITICAL",
          skipServices: strings(c.skip_services),
        },
      };
    }
    default:
      ck.fail("empty_command", p, `unsupported command ${name}`, "use one of the 17 adb_request commands");
      return undefined;
  }
}

/** A `sleep` step (the same message in every dialect). */
export function sleep(ck: Checker, step: Obj, path: string): StepAction {
  const timeSec = num(obj(step.sleep)?.time_sec);
  if (timeSec < 0) ck.fail("negative_timeout", `${path}.sleep.time_sec`, `negative sleep ${timeSec}`, "use seconds >= 0");
  return { kind: "sleep", timeSec };
}

export function tap(ck: Checker, c: Obj, p: string): AdbCommand {
  const x = num(c.x);
  const y = num(c.y);
  if (x < 0 || y < 0) ck.fail("bad_value", `${p}.${x < 0 ? "x" : "y"}`, `negative tap coordinate (${x}, ${y})`, "use pixel coordinates >= 0");
  return { command: "tap", x, y };
}

function settings(ck: Checker, c: Obj, p: string): AdbCommand | undefined {
  const ns = str(c.name_space);
  if (ns === "" || ns === "UNKNOWN") ck.fail("bad_settings", `${p}.name_space`, "settings request without a namespace", "set name_space: SYSTEM, SECURE or GLOBAL");
  const namespace = ns.toLowerCase() as SettingsNamespace;
  const verbName = str(c.verb);
  const v = obj(c[verbName]) ?? {};
  const vp = `${p}.${verbName}`;
  const key = (): string => {
    const k = str(v.key);
    if (k === "") ck.fail("bad_settings", `${vp}.key`, "empty settings key", "give the setting's key, e.g. key: \"user_rotation\"");
    return k;
  };
  let action: SettingsVerb;
  switch (verbName) {
    case "get":
      action = { verb: "get", key: key() };
      break;
    case "put": {
      const k = key();
      const value = str(v.value);
      if (value === "") ck.fail("bad_settings", `${vp}.value`, "empty settings value", "give the value to put, e.g. value: \"0\"");
      action = { verb: "put", key: k, value };
      break;
    }
    case "delete_key":
      action = { verb: "delete", key: key() };
      break;
    case "reset": {
      const mode = str(v.mode);
      action = {
        verb: "reset",
        packageName: ck.packageName(`${vp}.package_name`, str(v.package_name), true),
        mode: (mode === "" || mode === "UNKNOWN" ? "" : mode.toLowerCase()) as "" | "untrusted_defaults" | "untrusted_clear" | "trusted_defaults",
      };
      break;
    }
    case "list":
      action = { verb: "list" };
      break;
    default:
      ck.fail("bad_settings", p, "settings request without a verb", "add one of get, put, delete_key, reset, list");
      return undefined;
  }
  return { command: "settings", namespace, action };
}

function packageManager(ck: Checker, c: Obj, p: string): AdbCommand | undefined {
  const verb = str(c.verb);
  const v = obj(c[verb]) ?? {};
  switch (verb) {
    case "list": {
      const what = str(v.what);
      if (what !== "features" && what !== "libraries" && what !== "packages") {
        ck.fail("bad_package_manager", `${p}.list`, "package_manager list names nothing to list", "add features {}, libraries {} or packages {}");
        return undefined;
      }
      return { command: "package_manager_list", what };
    }
    case "clear":
      return { command: "package_manager_clear", packageName: ck.packageName(`${p}.clear.package_name`, str(v.package_name)), userId: str(v.user_id) };
    case "grant": {
      const permissions = strings(v.permissions);
      if (permissions.length === 0) ck.fail("bad_package_manager", `${p}.grant.permissions`, "grant without permissions", "list permissions such as \"android.permission.WRITE_SECURE_SETTINGS\"");
      return { command: "package_manager_grant", packageName: ck.packageName(`${p}.grant.package_name`, str(v.package_name)), permissions };
    }
    default:
      ck.fail("bad_package_manager", p, "package_manager request without a verb", "add one of list, clear, grant");
      return undefined;
  }
}
