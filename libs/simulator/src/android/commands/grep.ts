/**
 * `grep [-E|-F|-G] [-i] [-v] [-c] [-q] [-e PATTERN] PATTERN [FILE…]`, streaming stdin line by line
 * (so `logcat | grep …` works while logcat follows). Patterns are compiled as JS regular
 * expressions, which covers what the farm sends (`grep -E visible=true`).
 */
import { fail, type CommandContext, type CommandTable } from "./types.ts";
import { bytesToText, stdinLines } from "../shell/io.ts";
import { coerceError } from "@farm/errors";

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

async function grep(args: string[], ctx: CommandContext): Promise<number> {
  let fixed = false;
  let ignoreCase = false;
  let invert = false;
  let count = false;
  let quiet = false;
  const patterns: string[] = [];
  const files: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "-e") {
      const p = args[++i];
      if (p === undefined) return fail(ctx, "grep: option requires an argument -- 'e'", 2);
      patterns.push(p);
    } else if (a.startsWith("-") && a.length > 1 && patterns.length + files.length === 0) {
      for (const f of a.slice(1)) {
        if (f === "E" || f === "G") fixed = false;
        else if (f === "F") fixed = true;
        else if (f === "i") ignoreCase = true;
        else if (f === "v") invert = true;
        else if (f === "c") count = true;
        else if (f === "q") quiet = true;
        else if (f !== "a" && f !== "s" && f !== "h") return fail(ctx, `grep: Unknown option '${f}'`, 2);
      }
    } else if (patterns.length === 0) patterns.push(a);
    else files.push(a);
  }
  if (patterns.length === 0) return fail(ctx, "usage: grep [-EFivcq] [-e PATTERN] PATTERN [FILE...]", 2);
  let regexes: RegExp[];
  try {
    regexes = patterns.map((p) => new RegExp(fixed ? escapeRegExp(p) : p, ignoreCase ? "i" : ""));
  } catch (e) {
    return fail(ctx, `grep: bad regex: ${coerceError(e).message}`, 2);
  }
  let matches = 0;
  const consider = (line: string): void => {
    const hit = regexes.some((r) => r.test(line)) !== invert;
    if (!hit) return;
    matches++;
    if (!count && !quiet) ctx.out(line + "\n");
  };
  if (files.length === 0) {
    for await (const line of stdinLines(ctx.stdin, ctx.signal)) consider(line.replace(/\r$/, ""));
  } else {
    for (const f of files) {
      const data = ctx.sys.fs.read(f.startsWith("/") ? f : `/${f}`);
      if (!data) {
        ctx.err(`grep: ${f}: No such file or directory\n`);
        continue;
      }
      for (const line of bytesToText(data).split("\n")) consider(line);
    }
  }
  if (count) ctx.out(`${matches}\n`);
  return matches > 0 ? 0 : 1;
}

export const grepCommands: CommandTable = {
  grep: { latencyClass: "shell", run: grep },
  egrep: { latencyClass: "shell", run: (args, ctx) => grep(["-E", ...args], ctx) },
};
