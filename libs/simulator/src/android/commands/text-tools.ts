/** Small text and test tools for pipelines: `head -n N`, `tail -n N`, `wc [-l|-c]`, `test` / `[`. */
import { fail, type CommandContext, type CommandTable } from "./types.ts";
import { readStdin, stdinLines, bytesToText } from "../shell/io.ts";

function lineCount(args: string[]): number | undefined {
  const i = args.findIndex((a) => a === "-n" || /^-n?\d+$/.test(a));
  if (i < 0) return 10;
  const v = args[i] === "-n" ? args[i + 1] : args[i]!.replace(/^-n?/, "");
  const n = Number(v);
  return Number.isInteger(n) && n >= 0 ? n : undefined;
}

async function head(args: string[], ctx: CommandContext): Promise<number> {
  const n = lineCount(args);
  if (n === undefined) return fail(ctx, "head: invalid number of lines", 1);
  let seen = 0;
  if (n === 0) return 0;
  for await (const line of stdinLines(ctx.stdin, ctx.signal)) {
    ctx.out(line + "\n");
    if (++seen >= n) break;
  }
  return 0;
}

async function tail(args: string[], ctx: CommandContext): Promise<number> {
  const n = lineCount(args);
  if (n === undefined) return fail(ctx, "tail: invalid number of lines", 1);
  const lines: string[] = [];
  for await (const line of stdinLines(ctx.stdin, ctx.signal)) {
    lines.push(line);
    if (lines.length > n) lines.shift();
  }
  for (const l of lines) ctx.out(l + "\n");
  return 0;
}

async function wc(args: string[], ctx: CommandContext): Promise<number> {
  const data = await readStdin(ctx.stdin, ctx.signal);
  const text = bytesToText(data);
  const lines = (text.match(/\n/g) ?? []).length;
  const words = text.split(/\s+/).filter(Boolean).length;
  if (args.includes("-l")) ctx.out(`${lines}\n`);
  else if (args.includes("-c")) ctx.out(`${data.length}\n`);
  else if (args.includes("-w")) ctx.out(`${words}\n`);
  else ctx.out(`${String(lines).padStart(7)} ${String(words).padStart(7)} ${String(data.length).padStart(7)}\n`);
  return 0;
}

/**
 * `test EXPR` / `[ EXPR ]`: -e -f -d -s -r -w -x -L -h -z -n, = == != and -eq -ne -lt -le -gt -ge, a leading `!`,
 * and expressions joined by -o (weaker) and -a.
 */
function evaluate(args: string[], ctx: CommandContext): boolean | undefined {
  for (const op of ["-o", "-a"]) {
    const at = args.indexOf(op, 1);
    if (at > 0 && at < args.length - 1) {
      const left = evaluate(args.slice(0, at), ctx);
      const right = evaluate(args.slice(at + 1), ctx);
      if (left === undefined || right === undefined) return undefined;
      return op === "-o" ? left || right : left && right;
    }
  }
  if (args[0] === "!") {
    const r = evaluate(args.slice(1), ctx);
    return r === undefined ? undefined : !r;
  }
  const fs = ctx.sys.fs;
  if (args.length === 0) return false;
  if (args.length === 1) return args[0] !== "";
  if (args.length === 2) {
    const [op, v] = args as [string, string];
    switch (op) {
      case "-e":
      case "-r":
        return fs.stat(v) !== undefined;
      case "-w":
        return fs.stat(v) !== undefined && ctx.sys.writeDenied(v) === undefined;
      case "-x":
        return ((fs.stat(v)?.mode ?? 0) & 0o111) !== 0;
      case "-L":
      case "-h":
      case "-b":
      case "-c":
      case "-p":
      case "-S":
        return false; // no links, devices, pipes or sockets in the simulated fs
      case "-f":
        return fs.read(v) !== undefined;
      case "-d":
        return fs.isDirectory(v);
      case "-s":
        return (fs.read(v)?.length ?? 0) > 0;
      case "-z":
        return v === "";
      case "-n":
        return v !== "";
      default:
        return undefined;
    }
  }
  if (args.length === 3) {
    const [a, op, b] = args as [string, string, string];
    const na = Number(a);
    const nb = Number(b);
    switch (op) {
      case "=":
      case "==":
        return a === b;
      case "!=":
        return a !== b;
      case "-eq":
        return na === nb;
      case "-ne":
        return na !== nb;
      case "-lt":
        return na < nb;
      case "-le":
        return na <= nb;
      case "-gt":
        return na > nb;
      case "-ge":
        return na >= nb;
      default:
        return undefined;
    }
  }
  return undefined;
}

function testCommand(args: string[], ctx: CommandContext): number {
  const r = evaluate(args, ctx);
  if (r === undefined) return fail(ctx, `test: unsupported expression: ${args.join(" ")}`, 2);
  return r ? 0 : 1;
}

export const textToolCommands: CommandTable = {
  head: { latencyClass: "shell", run: head },
  tail: { latencyClass: "shell", run: tail },
  wc: { latencyClass: "shell", run: wc },
  test: { latencyClass: "shell", run: testCommand },
  "[": {
    latencyClass: "shell",
    run(args, ctx) {
      if (args[args.length - 1] !== "]") return fail(ctx, "[: missing ]", 2);
      return testCommand(args.slice(0, -1), ctx);
    },
  },
};
