/** `settings [--user N] get|put|delete|list|reset <namespace> …` (also reached as `cmd settings …`). */
import { fail, type CommandContext, type CommandTable } from "./types.ts";
import { SETTINGS_NAMESPACES, type SettingsNamespace } from "../system/settings-store.ts";

const USAGE = "usage:  settings [--user <USER_ID> | current] get namespace key\n        settings [--user <USER_ID> | current] put namespace key value\n        settings [--user <USER_ID> | current] delete namespace key\n        settings [--user <USER_ID> | current] reset namespace {PACKAGE_NAME | RESET_MODE}\n        settings [--user <USER_ID> | current] list namespace\n\n'namespace' is one of {system, secure, global}, case-insensitive";

export function runSettings(argsIn: string[], ctx: CommandContext): number {
  const args = [...argsIn];
  if (args[0] === "--user") args.splice(0, 2);
  const [verb, nsRaw, key, ...rest] = args;
  const ns = nsRaw?.toLowerCase();
  if (!verb || !ns || !(SETTINGS_NAMESPACES as readonly string[]).includes(ns)) return fail(ctx, USAGE, 255);
  const namespace = ns as SettingsNamespace;
  const store = ctx.sys.settings;
  switch (verb) {
    case "get":
      if (!key) return fail(ctx, USAGE, 255);
      ctx.out(`${store.get(namespace, key) ?? "null"}\n`);
      return 0;
    case "put": {
      const value = rest[0];
      if (!key || value === undefined) return fail(ctx, USAGE, 255);
      store.put(namespace, key, value);
      ctx.sys.onSettingChanged(namespace, key);
      return 0;
    }
    case "delete":
      if (!key) return fail(ctx, USAGE, 255);
      ctx.out(`Deleted ${store.delete(namespace, key) ? 1 : 0} rows\n`);
      ctx.sys.onSettingChanged(namespace, key);
      return 0;
    case "list":
      for (const [k, v] of store.list(namespace)) ctx.out(`${k}=${v}\n`);
      return 0;
    case "reset":
      if (!key) return fail(ctx, USAGE, 255);
      store.reset(namespace);
      ctx.sys.onSettingChanged(namespace, "*");
      return 0;
    default:
      return fail(ctx, USAGE, 255);
  }
}

export const settingsCommands: CommandTable = {
  settings: { latencyClass: "settings", run: runSettings },
};
