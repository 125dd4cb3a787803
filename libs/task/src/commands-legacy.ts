/** Legacy dialects (a) and (b): `adb_call` → current commands and farm step kinds (task-format.md §5.3). */
import { num, obj, type Obj, str, strings } from "./checker.ts";
import { filesystemLocation, sleep, type StepEnv, tap } from "./commands-current.ts";
import type { AdbCommand, ApkLocation, StepAction } from "./model.ts";
import { isActivityName } from "./names.ts";

const adb = (cmd: AdbCommand): StepAction => ({ kind: "adb", request: { timeoutSec: 0, cmd } });
const put = (namespace: "system" | "secure" | "global", key: string, value: string): StepAction =>
  adb({ command: "settings", namespace, action: { verb: "put", key, value } });

const ORIENTATIONS = ["PORTRAIT_0", "LANDSCAPE_90", "PORTRAIT_180", "LANDSCAPE_270"];

export function legacyStepPayload(env: StepEnv) {
  return (step: Obj, path: string): StepAction[] => {
    const { ck } = env;
    switch (step.step) {
      case "sleep":
        return [sleep(ck, step, path)];
      case "tap":
        // Upstream never implemented SetupStep.tap (it logged and skipped the step).
        ck.fail("tap_step", `${path}.tap`, "SetupStep.tap was never implemented", "use adb_call { tap { x: <px> y: <px> } } instead");
        return [];
      case "adb_call":
        return legacyCommand(env, obj(step.adb_call) ?? {}, `${path}.adb_call`);
      default:
        return [];
    }
  };
}

function legacyCommand(env: StepEnv, call: Obj, base: string): StepAction[] {
  const { ck } = env;
  const name = str(call.command);
  if (name === "") {
    ck.fail("empty_command", base, "adb_call names no command", "add one command such as start_activity { … } or delete the step");
    return [];
  }
  const c = obj(call[name]) ?? {};
  const p = `${base}.${name}`;
  const pkg = (field = "package_name"): string => ck.packageName(`${p}.${field}`, str(c[field]));
  switch (name) {
    case "install_apk": {
      let location: ApkLocation | undefined;
      if (c.location === "filesystem") location = filesystemLocation(env, c, p);
      else if (c.location === "mpm") {
        const m = obj(c.mpm) ?? {};
        const file = str(m.path);
        if (file === "") ck.fail("bad_apk", `${p}.mpm.path`, "mpm location without an APK file name", "set mpm.path, or use filesystem { path: \"apks/app.apk\" }");
        else if (/[\\/]/.test(file) || file === "." || file === "..")
          ck.fail("bad_apk", `${p}.mpm.path`, `mpm.path ${JSON.stringify(file)} is not a plain file name`, "name the APK file only (it is looked up in the APK folders), e.g. path: \"app-debug.apk\"");
        location = { kind: "mpm", packageName: str(m.package_name), label: str(m.label), path: file };
      } else ck.fail("bad_apk", p, "install_apk has no location", "add filesystem { path: \"apks/app.apk\" }");
      return location ? [adb({ command: "install_apk", location })] : [];
    }
    case "start_activity":
      if (str(c.flag) !== "") ck.warn(`${p}.flag`, "start_activity.flag was ignored by the 2021 runtime and is ignored here");
      // The 2021 runtime always passed -S (force stop first).
      return [adb({ command: "start_activity", fullActivity: ck.activity(`${p}.full_activity`, str(c.full_activity)), extraArgs: strings(c.extra_args), forceStop: true })];
    case "force_stop":
      return [adb({ command: "force_stop", packageName: pkg() })];
    case "clear_cache":
      return [adb({ command: "package_manager_clear", packageName: pkg(), userId: "" })];
    case "grant_permissions": {
      const permissions = strings(c.permissions);
      if (permissions.length === 0) ck.fail("bad_package_manager", `${p}.permissions`, "grant_permissions without permissions", "list permissions such as \"android.permission.WRITE_SECURE_SETTINGS\"");
      return [adb({ command: "package_manager_grant", packageName: pkg(), permissions })];
    }
    case "tap":
      return [adb(tap(ck, c, p))];
    case "press_button":
      return [adb({ command: "press_button", button: (str(c.button) || "HOME") as "HOME" | "BACK" })];
    case "rotate": {
      const orientation = Math.max(0, ORIENTATIONS.indexOf(str(c.orientation) || "PORTRAIT_0"));
      return [put("system", "user_rotation", String(orientation))];
    }
    case "start_accessibility_service":
      return [put("secure", "enabled_accessibility_services", ck.activity(`${p}.full_service`, str(c.full_service), "service"))];
    case "start_screen_pinning":
      return [adb({ command: "start_screen_pinning", fullActivity: ck.activity(`${p}.full_activity`, str(c.full_activity)) })];
    case "start_random_activity": {
      // A malformed entry only fails when drawn; real files have one (two strings joined by a missing comma), so
      // drop such entries with a warning instead of rejecting the task.
      const activities = strings(c.activity_list).filter((a, i) => {
        if (isActivityName(a)) return true;
        const hint = (a.match(/\//g) ?? []).length > 1 ? " (two names joined: a missing comma between adjacent strings?)" : "";
        ck.warn(`${p}.activity_list[${i}]`, `${JSON.stringify(a)} is not pkg/Class${hint}; dropped from the random choice`);
        return false;
      });
      if (activities.length === 0) ck.fail("empty_activity", `${p}.activity_list`, "start_random_activity without activities", "list at least one \"pkg/pkg.Activity\"");
      const timeoutSec = ck.timeout(`${p}.timeout_sec`, num(c.timeout_sec), true);
      return [{ kind: "start_random_activity", activities, extraArgs: strings(c.extra_args), timeoutSec }];
    }
    case "force_stop_random_activity":
      return [{ kind: "force_stop_random_activity" }];
    case "clear_cache_random_activity":
      return [{ kind: "clear_cache_random_activity" }];
    case "disable_animations":
      return ["window_animation_scale", "transition_animation_scale", "animator_duration_scale"].map((key) => put("global", key, "0.0"));
    case "start_intent": {
      const packageName = ck.packageName(`${p}.package_name`, str(c.package_name), true);
      const action = ck.nonEmpty(`${p}.action`, str(c.action), "intent action");
      const dataUri = str(c.data_uri);
      // Empty parts are left out rather than passed as empty words to the device shell.
      const args = ["shell", "am", "start", "-a", action, ...(dataUri ? ["-d", dataUri] : []), ...(packageName ? [packageName] : [])];
      return [adb({ command: "generic", args })];
    }
    case "uninstall_package":
      return [adb({ command: "uninstall_package", packageName: pkg() })];
    default:
      ck.fail("empty_command", p, `unsupported command ${name}`, "use one of the adb_call commands of the 2021 schema");
      return [];
  }
}
