/** File commands over the device's in-memory fs: cat, ls, rm, mkdir, touch. The working directory is `/`. */
import { fail, type CommandContext, type CommandTable } from "./types.ts";
import { readStdin } from "../shell/io.ts";
import { normalizePath } from "../system/file-system.ts";

function resolve(path: string): string {
  return normalizePath(path.startsWith("/") ? path : `/${path}`);
}

function modeString(mode: number): string {
  const type = (mode & 0o170000) === 0o040000 ? "d" : "-";
  const bits = "rwxrwxrwx";
  let s = type;
  for (let i = 0; i < 9; i++) s += mode & (1 << (8 - i)) ? bits[i] : "-";
  return s;
}

function dateString(sec: number): string {
  return new Date(sec * 1000).toISOString().slice(0, 16).replace("T", " ");
}

async function cat(args: string[], ctx: CommandContext): Promise<number> {
  if (args.length === 0 || (args.length === 1 && args[0] === "-")) {
    ctx.out(await readStdin(ctx.stdin, ctx.signal));
    return 0;
  }
  let status = 0;
  for (const a of args) {
    const p = resolve(a);
    const data = ctx.sys.fs.read(p);
    if (data) ctx.out(data);
    else {
      ctx.err(`cat: ${a}: ${ctx.sys.fs.isDirectory(p) ? "Is a directory" : "No such file or directory"}\n`);
      status = 1;
    }
  }
  return status;
}

function ls(args: string[], ctx: CommandContext): number {
  let long = false;
  let all = false;
  let dirOnly = false;
  const paths: string[] = [];
  for (const a of args) {
    if (a.startsWith("-") && a.length > 1) {
      for (const f of a.slice(1)) {
        if (f === "l") long = true;
        else if (f === "a") all = true;
        else if (f === "d") dirOnly = true;
        else if (!"1hRsnt".includes(f)) return fail(ctx, `ls: Unknown option '${f}'`, 1);
      }
    } else paths.push(a);
  }
  if (paths.length === 0) paths.push("/");
  const fs = ctx.sys.fs;
  let status = 0;
  const line = (name: string, st: { mode: number; size: number; mtimeSec: number }): string =>
    long ? `${modeString(st.mode)} 1 shell shell ${String(st.size).padStart(8)} ${dateString(st.mtimeSec)} ${name}\n` : `${name}\n`;
  for (const raw of paths) {
    const p = resolve(raw);
    const st = fs.stat(p);
    if (!st) {
      ctx.err(`ls: ${raw}: No such file or directory\n`);
      status = 1;
      continue;
    }
    if (dirOnly || !fs.isDirectory(p)) {
      ctx.out(line(raw, st));
      continue;
    }
    if (paths.length > 1) ctx.out(`${raw}:\n`);
    const entries = fs.list(p)!;
    if (long) ctx.out(`total ${entries.length}\n`);
    for (const e of entries) if (all || !e.name.startsWith(".")) ctx.out(line(e.name, e));
  }
  return status;
}

function rm(args: string[], ctx: CommandContext): number {
  let force = false;
  let recursive = false;
  const paths: string[] = [];
  for (const a of args) {
    if (/^-[rRf]+$/.test(a)) {
      if (a.includes("f")) force = true;
      if (/[rR]/.test(a)) recursive = true;
    } else paths.push(a);
  }
  if (paths.length === 0) return force ? 0 : fail(ctx, "rm: Needs 1 argument", 1);
  let status = 0;
  for (const raw of paths) {
    const p = resolve(raw);
    if (p === "/" || p === "/system" || p.startsWith("/system/") || p === "/proc" || p === "/dev" || p.startsWith("/dev/")) {
      ctx.err(`rm: ${raw}: Read-only file system\n`);
      status = 1;
      continue;
    }
    const r = ctx.sys.fs.remove(p, recursive);
    if (r === "is-directory") {
      ctx.err(`rm: ${raw}: Is a directory\n`);
      status = 1;
    } else if (!r && !force) {
      ctx.err(`rm: ${raw}: No such file or directory\n`);
      status = 1;
    }
  }
  return status;
}

export const fileCommands: CommandTable = {
  cat: { latencyClass: "shell", run: cat },
  ls: { latencyClass: "shell", run: ls },
  rm: { latencyClass: "shell", run: rm },
  mkdir: {
    latencyClass: "shell",
    run(args, ctx) {
      const paths = args.filter((a) => !a.startsWith("-"));
      if (paths.length === 0) return fail(ctx, "mkdir: Needs 1 argument", 1);
      for (const p of paths) ctx.sys.fs.mkdirs(resolve(p));
      return 0;
    },
  },
  touch: {
    latencyClass: "shell",
    run(args, ctx) {
      for (const a of args.filter((x) => !x.startsWith("-"))) {
        const p = resolve(a);
        const data = ctx.sys.fs.read(p) ?? new Uint8Array(0);
        if (!ctx.sys.fs.isDirectory(p)) ctx.sys.fs.write(p, data, 0o644, Math.floor(ctx.sys.now() / 1000));
      }
      return 0;
    },
  },
};
