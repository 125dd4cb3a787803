/**
 * `svc wifi|data enable|disable`: what AndroidEnv's A11yGrpcWrapper runs to bring networking back for
 * the accessibility forwarder. The state lands in the global settings it shows in on a device
 * (`wifi_on`, `mobile_data`); the emulator's network to the host does not depend on it.
 */
import { fail, type CommandContext, type CommandTable } from "./types.ts";

const SWITCHES = new Map([
  ["wifi", "wifi_on"],
  ["data", "mobile_data"],
]);
const USAGE = "Usage:\n    svc wifi [enable|disable]\n    svc data [enable|disable]";

function svc(args: string[], ctx: CommandContext): number {
  const [what, verb] = args;
  const key = what === undefined ? undefined : SWITCHES.get(what);
  if (!key || (verb !== "enable" && verb !== "disable")) return fail(ctx, USAGE, 1);
  ctx.sys.settings.put("global", key, verb === "enable" ? "1" : "0");
  ctx.sys.onSettingChanged("global", key);
  return 0;
}

export const svcCommands: CommandTable = {
  svc: { latencyClass: "settings", run: svc },
};
