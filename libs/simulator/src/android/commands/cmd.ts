/** `cmd <service> …`: routes the services this device knows to the matching command. */
import { fail, type CommandContext, type CommandSpec, type CommandTable } from "./types.ts";
import { runPm } from "./pm.ts";
import { runSettings } from "./settings.ts";
import { amCommands } from "./am.ts";
import { wmCommands } from "./wm.ts";
import { inputCommands } from "./input.ts";

// The routed commands by their own tables, not through registry.ts (which lists `cmd` itself: a cycle).
const ROUTES: Record<string, CommandSpec | undefined> = { activity: amCommands.am, window: wmCommands.wm, input: inputCommands.input };

async function cmd(args: string[], ctx: CommandContext): Promise<number> {
  const [service, ...rest] = args;
  if (service === "package") return runPm(rest, ctx);
  if (service === "settings") return runSettings(rest, ctx);
  if (service === "-l") {
    ctx.out(["activity", "input", "package", "settings", "window"].join("\n") + "\n");
    return 0;
  }
  const spec = service && Object.hasOwn(ROUTES, service) ? ROUTES[service] : undefined;
  if (spec) return spec.run(rest, ctx);
  return fail(ctx, `cmd: Can't find service: ${service ?? ""}`, 20);
}

export const cmdCommands: CommandTable = {
  cmd: { latencyClass: "pm", run: cmd },
};
