/**
 * AndroidEnv's `AdbRequest` / `AdbResponse` (proto/android_env/proto/adb.proto) in protobuf's JSON mapping, as
 * the task protocol carries them, turned into the farm's typed `AdbRequest` (@farm/task) and back from a
 * `StepResult` (@farm/adb).
 *
 * Decoding follows the JSON mapping's parser rules, strictly: a field may be written with its lowerCamelCase JSON
 * name or its proto name (not both); `null` means the default; enums by name or number; 32-bit integers as numbers
 * or decimal strings; floats as numbers or decimal strings (not NaN / Infinity: they are never a sensible
 * timeout); bytes as base64 (standard or URL-safe, padding optional); an unknown field, a wrong type or two
 * members of a oneof are errors naming the field's path.
 */
import { z } from "zod";
import type { AdbCommand, AdbRequest, DumpsysOptions, SettingsVerb } from "@farm/task";
import type { StepResult, StepStatus } from "@farm/adb";

/** snake_case proto name → lowerCamelCase JSON name (protoc's rule for these names). */
export const jsonName = (proto: string): string => proto.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** Decoding limits: the byte fields' decoded size, strings' length, repeated fields' count. */
export interface DecodeLimits {
  maxContentBytes: number;
  maxStringChars: number;
  maxRepeated: number;
}

/**
 * A message schema: accepts both spellings of each field name (protobuf JSON parsers must), drops `null`s, and then
 * is strict: an unknown field is an error naming it.
 */
function message<S extends z.ZodRawShape>(fields: S) {
  const byJson = new Map<string, string>();
  for (const k of Object.keys(fields)) byJson.set(jsonName(k), k);
  const rename = (v: unknown, ctx: z.RefinementCtx): unknown => {
    if (typeof v !== "object" || v === null || Array.isArray(v)) return v; // the object schema names the type
    const out: Record<string, unknown> = Object.create(null);
    for (const [k, val] of Object.entries(v)) {
      const proto = byJson.get(k) ?? k;
      if (Object.hasOwn(out, proto)) {
        ctx.addIssue({ code: "custom", message: `field ${proto} is given twice (as ${jsonName(proto)} and ${proto})`, path: [k] });
        continue;
      }
      if (val === null) continue; // JSON mapping: null is the field's default
      out[proto] = val;
    }
    return { ...out };
  };
  return z.preprocess(rename, z.strictObject(fields).partial());
}

/** Exactly one (or, with `optional`, at most one) member of a oneof present. */
function oneof<T extends Record<string, unknown>>(schema: z.ZodType<T>, members: readonly (keyof T & string)[], name: string, optional = false) {
  return schema.superRefine((v, ctx) => {
    const set = members.filter((m) => v[m] !== undefined);
    if (set.length > 1) ctx.addIssue({ code: "custom", message: `oneof ${name}: only one of ${set.join(", ")} may be set` });
    else if (set.length === 0 && !optional) ctx.addIssue({ code: "custom", message: `oneof ${name}: one of ${members.join(", ")} must be set` });
  });
}

function enumOf<const N extends readonly string[]>(names: N) {
  return z.union([z.enum(names), z.number().int()]).transform((v, ctx): N[number] => {
    if (typeof v === "string") return v;
    const name = names[v];
    if (name === undefined) {
      ctx.addIssue({ code: "custom", message: `enum value ${v} is not one of 0..${names.length - 1}` });
      return z.NEVER;
    }
    return name;
  });
}

const int32 = z
  .union([z.number().int(), z.string().regex(/^-?[0-9]{1,10}$/, "a decimal integer")])
  .transform(Number)
  .refine((n) => n >= -(2 ** 31) && n < 2 ** 31, "out of the int32 range");

const float = z
  .union([z.number(), z.string().regex(/^-?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$/, "a decimal number")])
  .transform(Number)
  .refine((n) => Number.isFinite(n), "a finite number");

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

export function adbRequestSchema(limits: DecodeLimits) {
  const str = z.string().max(limits.maxStringChars);
  const strs = z.array(str).max(limits.maxRepeated);
  const bytes = z
    .string()
    .regex(BASE64, "base64")
    .transform((s, ctx) => {
      const b = Buffer.from(s.replace(/-/g, "+").replace(/_/g, "/"), "base64");
      if (b.byteLength > limits.maxContentBytes) {
        ctx.addIssue({ code: "custom", message: `${b.byteLength} bytes, more than ${limits.maxContentBytes}` });
        return z.NEVER;
      }
      return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
    });
  const empty = message({});
  const installApk = oneof(
    message({ filesystem: message({ path: str }), blob: message({ contents: bytes }) }),
    ["filesystem", "blob"],
    "InstallApk.location",
  );
  const settings = oneof(
    message({
      name_space: enumOf(["UNKNOWN", "SYSTEM", "SECURE", "GLOBAL"] as const),
      get: message({ key: str }),
      put: message({ key: str, value: str }),
      delete_key: message({ key: str }),
      reset: message({ package_name: str, mode: enumOf(["UNKNOWN", "UNTRUSTED_DEFAULTS", "UNTRUSTED_CLEAR", "TRUSTED_DEFAULTS"] as const) }),
      list: empty,
    }),
    ["get", "put", "delete_key", "reset", "list"],
    "SettingsRequest.verb",
  );
  const pmList = oneof(message({ features: empty, libraries: empty, packages: message({ filter: str, options: strs }) }), ["features", "libraries", "packages"], "PackageManagerRequest.List.what");
  const packageManager = oneof(
    message({ list: pmList, clear: message({ package_name: str, user_id: str }), grant: message({ package_name: str, permissions: strs }) }),
    ["list", "clear", "grant"],
    "PackageManagerRequest.verb",
  );
  const dumpsys = message({
    service: str,
    args: strs,
    list_only: z.boolean(),
    timeout_sec: int32,
    timeout_ms: int32,
    pid: z.boolean(),
    proto: z.boolean(),
    priority: enumOf(["UNSET", "NORMAL", "HIGH", "CRITICAL"] as const),
    skip_services: strs,
  });
  return oneof(
    message({
      install_apk: installApk,
      start_activity: message({ full_activity: str, extra_args: strs, force_stop: z.boolean() }),
      force_stop: message({ package_name: str }),
      tap: message({ x: int32, y: int32 }),
      press_button: message({ button: enumOf(["HOME", "BACK", "ENTER"] as const) }),
      start_screen_pinning: message({ full_activity: str }),
      uninstall_package: message({ package_name: str }),
      get_current_activity: empty,
      get_orientation: empty,
      push: message({ content: bytes, path: str }),
      pull: message({ path: str }),
      input_text: message({ text: str }),
      settings,
      generic: message({ args: strs }),
      package_manager: packageManager,
      dumpsys,
      send_broadcast: message({ action: str, component: str }),
      timeout_sec: float,
    }),
    [
      "install_apk",
      "start_activity",
      "force_stop",
      "tap",
      "press_button",
      "start_screen_pinning",
      "uninstall_package",
      "get_current_activity",
      "get_orientation",
      "push",
      "pull",
      "input_text",
      "settings",
      "generic",
      "package_manager",
      "dumpsys",
      "send_broadcast",
    ],
    "AdbRequest.command",
  );
}

export type AdbRequestJson = z.output<ReturnType<typeof adbRequestSchema>>;

/** What a decoded request needs beyond the typed command: a `pm list packages` filter the farm applies to the items. */
export interface DecodedRequest {
  request: AdbRequest;
  /** The JSON oneof member that was set (`package_manager`, not `package_manager_list`): what the response's payload answers. */
  member: string;
  /** `package_manager.list.packages.filter`: only items containing it are answered. */
  packagesFilter?: string;
  /** Why the farm answers FAILED_PRECONDITION without touching the device (a field it cannot honour). */
  unsupported?: string;
}

/** The validated JSON turned into the farm's typed request. */
export function toTypedRequest(j: AdbRequestJson): DecodedRequest {
  const timeoutSec = j.timeout_sec ?? 0;
  const wrap = (member: string, cmd: AdbCommand, extra: Partial<DecodedRequest> = {}): DecodedRequest => ({ request: { timeoutSec, cmd }, member, ...extra });
  if (j.install_apk) {
    const loc = j.install_apk;
    if (loc.blob) return wrap("install_apk", { command: "install_apk", location: { kind: "blob", contents: loc.blob.contents ?? new Uint8Array() } });
    const p = loc.filesystem?.path ?? "";
    return wrap("install_apk", { command: "install_apk", location: { kind: "filesystem", path: p, declaredPath: p } });
  }
  if (j.start_activity) {
    const s = j.start_activity;
    return wrap("start_activity", { command: "start_activity", fullActivity: s.full_activity ?? "", extraArgs: s.extra_args ?? [], forceStop: s.force_stop ?? false });
  }
  if (j.force_stop) return wrap("force_stop", { command: "force_stop", packageName: j.force_stop.package_name ?? "" });
  if (j.tap) return wrap("tap", { command: "tap", x: j.tap.x ?? 0, y: j.tap.y ?? 0 });
  if (j.press_button) return wrap("press_button", { command: "press_button", button: j.press_button.button ?? "HOME" });
  if (j.start_screen_pinning) return wrap("start_screen_pinning", { command: "start_screen_pinning", fullActivity: j.start_screen_pinning.full_activity ?? "" });
  if (j.uninstall_package) return wrap("uninstall_package", { command: "uninstall_package", packageName: j.uninstall_package.package_name ?? "" });
  if (j.get_current_activity) return wrap("get_current_activity", { command: "get_current_activity" });
  if (j.get_orientation) return wrap("get_orientation", { command: "get_orientation" });
  if (j.push) return wrap("push", { command: "push", content: j.push.content ?? new Uint8Array(), path: j.push.path ?? "" });
  if (j.pull) return wrap("pull", { command: "pull", path: j.pull.path ?? "" });
  if (j.input_text) return wrap("input_text", { command: "input_text", text: j.input_text.text ?? "" });
  if (j.settings) {
    const s = j.settings;
    const ns = s.name_space ?? "UNKNOWN";
    let action: SettingsVerb;
    if (s.get) action = { verb: "get", key: s.get.key ?? "" };
    else if (s.put) action = { verb: "put", key: s.put.key ?? "", value: s.put.value ?? "" };
    else if (s.delete_key) action = { verb: "delete", key: s.delete_key.key ?? "" };
    else if (s.reset) {
      const mode = s.reset.mode ?? "UNKNOWN";
      action = { verb: "reset", packageName: s.reset.package_name ?? "", mode: mode === "UNKNOWN" ? "" : (mode.toLowerCase() as "untrusted_defaults" | "untrusted_clear" | "trusted_defaults") };
    } else action = { verb: "list" };
    const cmd: AdbCommand = { command: "settings", namespace: ns === "UNKNOWN" ? "global" : (ns.toLowerCase() as "system" | "secure" | "global"), action };
    return wrap("settings", cmd, ns === "UNKNOWN" ? { unsupported: "settings: name_space is UNKNOWN (give SYSTEM, SECURE or GLOBAL)" } : {});
  }
  if (j.generic) return wrap("generic", { command: "generic", args: j.generic.args ?? [] });
  if (j.package_manager) {
    const pm = j.package_manager;
    if (pm.list) {
      const what = pm.list.features ? "features" : pm.list.libraries ? "libraries" : "packages";
      const pk = pm.list.packages;
      const extra: Partial<DecodedRequest> = {};
      if (pk?.filter) extra.packagesFilter = pk.filter;
      if (pk?.options && pk.options.length > 0) extra.unsupported = "package_manager list packages: options are not supported by the farm (filter is)";
      return wrap("package_manager", { command: "package_manager_list", what }, extra);
    }
    if (pm.clear) return wrap("package_manager", { command: "package_manager_clear", packageName: pm.clear.package_name ?? "", userId: pm.clear.user_id ?? "" });
    return wrap("package_manager", { command: "package_manager_grant", packageName: pm.grant?.package_name ?? "", permissions: pm.grant?.permissions ?? [] });
  }
  if (j.dumpsys) {
    const d = j.dumpsys;
    const options: DumpsysOptions = {
      service: d.service ?? "",
      args: d.args ?? [],
      listOnly: d.list_only ?? false,
      timeoutSec: d.timeout_sec ?? 0,
      timeoutMs: d.timeout_ms ?? 0,
      proto: d.proto ?? false,
      priority: d.priority === undefined || d.priority === "UNSET" ? "" : d.priority,
      skipServices: d.skip_services ?? [],
    };
    return wrap("dumpsys", { command: "dumpsys", options });
  }
  const b = j.send_broadcast!;
  return wrap("send_broadcast", { command: "send_broadcast", action: b.action ?? "", component: b.component ?? "" });
}

// ---- responses ----

const STATUS: Record<StepStatus, string> = {
  ok: "OK",
  adb_error: "ADB_ERROR",
  timeout: "TIMEOUT",
  failed_precondition: "FAILED_PRECONDITION",
  internal_error: "INTERNAL_ERROR",
  unknown_command: "UNKNOWN_COMMAND",
};

const b64 = (text: string): string => Buffer.from(text, "utf8").toString("base64");

/**
 * The `AdbResponse` (JSON mapping, lowerCamelCase names, enum names) for a step result of the request `member`.
 * The payload is filled for every kind that has one, also after a failure (AndroidWorld reads `generic.output`
 * of failed calls for its messages).
 */
export function toAdbResponseJson(member: string, r: StepResult, opts: { packagesFilter?: string } = {}): Record<string, unknown> {
  const out: Record<string, unknown> = { status: STATUS[r.status] ?? "INTERNAL_ERROR" };
  if (r.status !== "ok") out.errorMessage = r.message;
  const output = r.output ?? "";
  switch (member) {
    case "get_current_activity":
      out.getCurrentActivity = { fullActivity: r.data?.kind === "current_activity" ? r.data.fullActivity : "" };
      break;
    case "start_activity":
      out.startActivity = { fullActivity: r.data?.kind === "start_activity" ? r.data.fullActivity : "", output: b64(output) };
      break;
    case "press_button":
      out.pressButton = { output: b64(output) };
      break;
    case "push":
      out.push = {};
      break;
    case "pull":
      out.pull = { content: r.data?.kind === "pull" ? Buffer.from(r.data.content).toString("base64") : "" };
      break;
    case "input_text":
      out.inputText = {};
      break;
    case "settings":
      out.settings = { output: b64(output) };
      break;
    case "generic":
      out.generic = { output: b64(output) };
      break;
    case "package_manager": {
      const pm: Record<string, unknown> = { output: b64(output) };
      if (r.data?.kind === "list") {
        const f = opts.packagesFilter;
        pm.list = { items: f ? r.data.items.filter((i) => i.includes(f)) : r.data.items };
      }
      out.packageManager = pm;
      break;
    }
    case "get_orientation":
      out.getOrientation = { orientation: r.data?.kind === "orientation" ? r.data.orientation : 0 };
      break;
    case "dumpsys":
      out.dumpsys = { output: b64(output) };
      break;
  }
  return out;
}
