/** `cmd <service> …`: routes the services this device knows to the matching command. */
import { fail, type CommandContext, type CommandTable } from "./types.ts";
import { runPm } from "./pm.ts";
import { runSettings } from "./settings.ts";
import { findCommand } from "./registry.ts";

const ROUTES: Record<string, string> = { activity: "am", window: "wm", input: "input" };

async function cmd(args: string[], ctx: CommandContext): Promise<number> {
  const [service, ...rest] = args;
  if (service === "package") return runPm(rest, ctx);
  if (service === "settings") return runSettings(rest, ctx);
  if (service === "-l") {
    ctx.out(["activity", "input", "package", "settings", "window"].join("\n") + "\n");
    return 0;
  }
  const routed = service ? ROUTES[service] : undefined;
  const spec = routed ? findCommand(routed) : undefined;
  if (spec) return spec.run(rest, ctx);
  return fail(ctx, `cmd: Can't find service: ${service ?? ""}`, 20);
}

export const cmdCommands: CommandTable = {
  cmd: { latencyClass: "pm", run: cmd },
};
