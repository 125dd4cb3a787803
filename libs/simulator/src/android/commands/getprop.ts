/**
 * `getprop [key [default]]` and `setprop key value`. As init's property service answers: a `ro.` property
 * that is set stays as it is; the shell (not root) may set only the debugging properties its SELinux
 * domain allows (`debug.`, `log.`, `persist.log.`, `persist.debug.`), so `service.adb.root` and the time
 * zone change only through adbd and AlarmManager.
 */
import { fail, type CommandContext, type CommandTable } from "./types.ts";

const SHELL_SETTABLE = ["debug.", "log.", "persist.log.", "persist.debug.", "ctl."];

function setDenied(ctx: CommandContext, key: string): boolean {
  if (key.startsWith("ro.") && ctx.sys.props.get(key) !== undefined) return true;
  return !ctx.sys.shellIsRoot() && !SHELL_SETTABLE.some((p) => key.startsWith(p));
}

export const propCommands: CommandTable = {
  getprop: {
    latencyClass: "shell",
    run(args, ctx) {
      const props = ctx.sys.props;
      if (args.length === 0) {
        for (const [k, v] of props.entries()) ctx.out(`[${k}]: [${v}]\n`);
        return 0;
      }
      ctx.out(`${props.get(args[0]!) ?? args[1] ?? ""}\n`);
      return 0;
    },
  },
  setprop: {
    latencyClass: "shell",
    run(args, ctx) {
      if (args.length !== 2) return fail(ctx, "usage: setprop NAME VALUE");
      if (setDenied(ctx, args[0]!)) return fail(ctx, `Failed to set property '${args[0]}' to '${args[1]}'.\nSee dmesg for error reason.`, 1);
      ctx.sys.props.set(args[0]!, args[1]!);
      return 0;
    },
  },
};
