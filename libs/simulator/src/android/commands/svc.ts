/**
 * `svc wifi|bluetooth|data enable|disable`: the system services switch, and the state lands in the
 * global settings where Android keeps it (`wifi_on`, `bluetooth_on`, `mobile_data`), which the
 * Settings app and `settings get` read. With airplane mode on, Wi-Fi and Bluetooth switched on read
 * 2 (Android's "on despite airplane mode"). The emulator's network to the host does not depend on it
 * (AndroidEnv's A11yGrpcWrapper runs `svc wifi enable` for its forwarder).
 */
import type { CommandContext, CommandTable } from "./types.ts";

interface Switch {
  key: string;
  /** The value "on" takes while airplane mode is on. */
  onInAirplane: string;
  usage: string;
}

const SWITCHES = new Map<string, Switch>([
  ["wifi", { key: "wifi_on", onInAirplane: "2", usage: "Control the Wi-Fi manager\n\nusage: svc wifi [enable|disable]\n         Turn Wi-Fi on or off." }],
  ["bluetooth", { key: "bluetooth_on", onInAirplane: "2", usage: "Control the Bluetooth manager\n\nusage: svc bluetooth [enable|disable]\n         Turn Bluetooth on or off." }],
  ["data", { key: "mobile_data", onInAirplane: "1", usage: "Control mobile data connectivity\n\nusage: svc data [enable|disable]\n         Turn mobile data on or off." }],
]);
const USAGE =
  "Available commands:\n    help     Show information about the subcommands\n    power    Control the power manager\n    data     Control mobile data connectivity\n    wifi     Control the Wi-Fi manager\n    usb      Control Usb state\n    nfc      Control NFC functions\n    bluetooth Control Bluetooth service";

function svc(args: string[], ctx: CommandContext): number {
  const [what, verb] = args;
  const sw = what === undefined ? undefined : SWITCHES.get(what);
  if (!sw) {
    ctx.out(USAGE + "\n");
    return what === undefined || what === "help" ? 0 : 1;
  }
  if (verb !== "enable" && verb !== "disable") {
    ctx.out(sw.usage + "\n");
    return 0;
  }
  const airplane = ctx.sys.settings.get("global", "airplane_mode_on") === "1";
  const current = ctx.sys.settings.get("global", sw.key);
  const isOn = current !== undefined && current !== "0";
  // A switch already in the asked state stays as it is (its stored value too).
  if (current !== undefined && (verb === "enable") === isOn) return 0;
  const value = verb === "disable" ? "0" : airplane ? sw.onInAirplane : "1";
  {
    ctx.sys.settings.put("global", sw.key, value);
    ctx.sys.onSettingChanged("global", sw.key);
  }
  return 0;
}

export const svcCommands: CommandTable = {
  svc: { latencyClass: "settings", run: svc },
};
