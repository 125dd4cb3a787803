/** `getprop [key [default]]` and `setprop key value`. */
import { fail, type CommandTable } from "./types.ts";

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
      ctx.sys.props.set(args[0]!, args[1]!);
      return 0;
    },
  },
};
