/**
 * File commands over the device's in-memory fs, with toybox's options and error texts where scripts
 * read them: cat, ls, rm, mkdir, touch, cp, mv, chmod, chown, restorecon. The working directory is
 * `/`. Options may come after the operands (`chmod 777 -R DIR`, `ls DIR -ll -au`), as toybox allows.
 * Writes the shell may not make (apps' data without root, the read-only system) fail as on a device.
 */
import { fail, type CommandContext, type CommandTable } from "./types.ts";
import { readStdin } from "../shell/io.ts";
import { normalizePath } from "../system/file-system.ts";
import { localTime, offsetString } from "../system/clock.ts";

function resolve(path: string): string {
  return normalizePath(path.startsWith("/") ? path : `/${path}`);
}

function parentOf(path: string): string {
  const i = path.lastIndexOf("/");
  return i <= 0 ? "/" : path.slice(0, i);
}

function baseName(raw: string): string {
  const trimmed = raw.replace(/\/+$/, "");
  return trimmed.slice(trimmed.lastIndexOf("/") + 1) || "/";
}

const S_IFDIR = 0o040000;
const nowSec = (ctx: CommandContext): number => Math.floor(ctx.sys.now() / 1000);

/** Splits toybox-style arguments: flags (any position, until `--`) and operands. Unknown flag letters → the letter. */
function parseArgs(args: string[], known: string): { flags: Map<string, number>; operands: string[]; bad?: string } {
  const flags = new Map<string, number>();
  const operands: string[] = [];
  let optionsDone = false;
  for (const a of args) {
    if (!optionsDone && a === "--") {
      optionsDone = true;
      continue;
    }
    if (!optionsDone && a.startsWith("-") && a.length > 1) {
      for (const f of a.slice(1)) {
        if (!known.includes(f)) return { flags, operands, bad: f };
        flags.set(f, (flags.get(f) ?? 0) + 1);
      }
    } else operands.push(a);
  }
  return { flags, operands };
}

function denied(ctx: CommandContext, tool: string, raw: string, path: string): boolean {
  const why = ctx.sys.writeDenied(path);
  if (!why) return false;
  ctx.err(`${tool}: '${raw}': ${why}\n`);
  return true;
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

function modeString(mode: number): string {
  const type = (mode & 0o170000) === S_IFDIR ? "d" : "-";
  const bits = "rwxrwxrwx";
  let s = type;
  for (let i = 0; i < 9; i++) s += mode & (1 << (8 - i)) ? bits[i] : "-";
  return s;
}

function ls(args: string[], ctx: CommandContext): number {
  const { flags, operands, bad } = parseArgs(args, "1aAdlRhnstucSrFCxmogiZL");
  if (bad) return fail(ctx, `ls: Unknown option '${bad}'`, 1);
  const long = (flags.get("l") ?? 0) + (flags.get("n") ?? 0) + (flags.get("o") ?? 0) + (flags.get("g") ?? 0) > 0;
  const fullTime = (flags.get("l") ?? 0) > 1;
  const all = flags.has("a");
  const almostAll = flags.has("A");
  const dirOnly = flags.has("d");
  const paths = operands.length === 0 ? ["."] : operands;
  const fs = ctx.sys.fs;
  const tz = ctx.sys.timeZone();
  const when = (sec: number): string => {
    const t = localTime(sec * 1000, tz);
    const p2 = (n: number): string => String(n).padStart(2, "0");
    const day = `${t.year}-${p2(t.month)}-${p2(t.day)} ${p2(t.hour)}:${p2(t.minute)}`;
    return fullTime ? `${day}:${p2(t.second)}.${String(t.ms * 1_000_000).padStart(9, "0")} ${offsetString(t.offsetMinutes)}` : day;
  };
  type Row = { name: string; mode: number; size: number; mtimeSec: number };
  const print = (rows: Row[]): void => {
    if (!long) {
      for (const r of rows) ctx.out(`${r.name}\n`);
      return;
    }
    const sizeWidth = Math.max(1, ...rows.map((r) => String(r.size).length));
    for (const r of rows) {
      const links = (r.mode & 0o170000) === S_IFDIR ? 2 : 1;
      ctx.out(`${modeString(r.mode)} ${links} root root ${String(r.size).padStart(sizeWidth)} ${when(r.mtimeSec)} ${r.name}\n`);
    }
  };
  let status = 0;
  const files: Row[] = [];
  const dirs: string[] = [];
  for (const raw of paths) {
    const p = resolve(raw);
    const st = fs.stat(p);
    if (!st) {
      ctx.err(`ls: ${raw}: No such file or directory\n`);
      status = 1;
      continue;
    }
    if (dirOnly || !fs.isDirectory(p)) files.push({ name: raw, ...st });
    else dirs.push(raw);
  }
  print(files);
  dirs.forEach((raw, i) => {
    const p = resolve(raw);
    if (operands.length > 1) ctx.out(`${i > 0 || files.length > 0 ? "\n" : ""}${raw}:\n`);
    const entries = (fs.list(p) ?? []).filter((e) => all || almostAll || !e.name.startsWith("."));
    const rows: Row[] = entries.map((e) => ({ name: e.name, mode: e.mode, size: e.size, mtimeSec: e.mtimeSec }));
    if (all) {
      const self = fs.stat(p)!;
      const parent = fs.stat(parentOf(p)) ?? self;
      rows.unshift({ name: ".", ...self }, { name: "..", ...parent });
    }
    if (long) ctx.out(`total ${entries.length * 4}\n`);
    print(rows);
  });
  return status;
}

function rm(args: string[], ctx: CommandContext): number {
  const { flags, operands, bad } = parseArgs(args, "rRfiv");
  if (bad) return fail(ctx, `rm: Unknown option '${bad}'`, 1);
  const force = flags.has("f");
  const recursive = flags.has("r") || flags.has("R");
  if (operands.length === 0) return force ? 0 : fail(ctx, "rm: Needs 1 argument", 1);
  let status = 0;
  for (const raw of operands) {
    const p = resolve(raw);
    const st = ctx.sys.fs.stat(p);
    if (!st) {
      if (!force) {
        ctx.err(`rm: ${raw}: No such file or directory\n`);
        status = 1;
      }
      continue;
    }
    const why = ctx.sys.writeDenied(p);
    if (why) {
      ctx.err(`rm: ${raw}: ${why}\n`);
      status = 1;
      continue;
    }
    const r = ctx.sys.fs.remove(p, recursive);
    if (r === "is-directory") {
      ctx.err(`rm: ${raw}: Is a directory\n`);
      status = 1;
    }
  }
  return status;
}

function mkdir(args: string[], ctx: CommandContext): number {
  const { flags, operands, bad } = parseArgs(args.filter((a, i) => !(args[i - 1] === "-m")), "pvm");
  if (bad) return fail(ctx, `mkdir: Unknown option '${bad}'`, 1);
  const modeArg = args.indexOf("-m") >= 0 ? args[args.indexOf("-m") + 1] : undefined;
  const perm = modeArg && /^[0-7]{1,4}$/.test(modeArg) ? parseInt(modeArg, 8) : 0o771;
  if (operands.length === 0) return fail(ctx, "mkdir: Needs 1 argument", 1);
  const fs = ctx.sys.fs;
  let status = 0;
  for (const raw of operands) {
    const p = resolve(raw);
    if (flags.has("p")) {
      if (fs.isDirectory(p)) continue;
      // Every missing ancestor is created; each must be writable.
      const missing: string[] = [];
      for (let q = p; !fs.stat(q); q = parentOf(q)) missing.unshift(q);
      if (missing.length === 0) {
        ctx.err(`mkdir: '${raw}': File exists\n`);
        status = 1;
        continue;
      }
      if (denied(ctx, "mkdir", raw, missing[0]!)) {
        status = 1;
        continue;
      }
      for (const q of missing) {
        const r = fs.mkdir(q, perm, nowSec(ctx));
        if (r !== "ok") {
          ctx.err(`mkdir: '${raw}': Not a directory\n`);
          status = 1;
          break;
        }
      }
      continue;
    }
    if (fs.stat(p)) {
      ctx.err(`mkdir: '${raw}': File exists\n`);
      status = 1;
      continue;
    }
    if (denied(ctx, "mkdir", raw, p)) {
      status = 1;
      continue;
    }
    const r = fs.mkdir(p, perm, nowSec(ctx));
    if (r !== "ok") {
      ctx.err(`mkdir: '${raw}': ${r === "no-parent" ? "No such file or directory" : "Not a directory"}\n`);
      status = 1;
    }
  }
  return status;
}

function touch(args: string[], ctx: CommandContext): number {
  const { flags, operands } = parseArgs(args, "acmhd");
  if (operands.length === 0) return fail(ctx, "touch: Needs 1 argument", 1);
  let status = 0;
  for (const raw of operands) {
    const p = resolve(raw);
    const fs = ctx.sys.fs;
    if (fs.stat(p)) {
      if (denied(ctx, "touch", raw, p)) status = 1;
      else fs.setMtime(p, nowSec(ctx));
      continue;
    }
    if (flags.has("c")) continue;
    if (!fs.isDirectory(parentOf(p))) {
      ctx.err(`touch: '${raw}': No such file or directory\n`);
      status = 1;
      continue;
    }
    if (denied(ctx, "touch", raw, p)) {
      status = 1;
      continue;
    }
    fs.write(p, new Uint8Array(0), 0o644, nowSec(ctx));
  }
  return status;
}

/**
 * `cp [-a|-r|-R|-p|-f|-n|-v] SRC… DEST`: into DEST when it is a directory (`SRC/.` copies the
 * contents), else onto DEST. `-a`/`-p` keep modes and times. Directories need `-r`/`-R`/`-a`.
 */
function cp(args: string[], ctx: CommandContext): number {
  const { flags, operands, bad } = parseArgs(args, "aRrpfnvidlsPHLFTu");
  if (bad) return fail(ctx, `cp: Unknown option '${bad}'`, 1);
  if (operands.length < 2) return fail(ctx, "cp: Need 2 arguments", 1);
  return copyOrMove("cp", operands, ctx, { recursive: flags.has("a") || flags.has("r") || flags.has("R"), preserve: flags.has("a") || flags.has("p"), noClobber: flags.has("n"), move: false });
}

function mv(args: string[], ctx: CommandContext): number {
  const { flags, operands, bad } = parseArgs(args, "finvT");
  if (bad) return fail(ctx, `mv: Unknown option '${bad}'`, 1);
  if (operands.length < 2) return fail(ctx, "mv: Need 2 arguments", 1);
  return copyOrMove("mv", operands, ctx, { recursive: true, preserve: true, noClobber: flags.has("n"), move: true });
}

function copyOrMove(tool: "cp" | "mv", operands: string[], ctx: CommandContext, opts: { recursive: boolean; preserve: boolean; noClobber: boolean; move: boolean }): number {
  const fs = ctx.sys.fs;
  const destRaw = operands[operands.length - 1]!;
  const dest = resolve(destRaw);
  const sources = operands.slice(0, -1);
  const destIsDir = fs.isDirectory(dest);
  if (sources.length > 1 && !destIsDir) return fail(ctx, `${tool}: '${destRaw}' not directory`, 1);
  let status = 0;
  for (const raw of sources) {
    const src = resolve(raw);
    const st = fs.stat(src);
    if (!st) {
      ctx.err(`${tool}: bad '${raw}': No such file or directory\n`);
      status = 1;
      continue;
    }
    // `cp -a DIR/. DEST/` names DEST itself; `cp X DIR` names DIR/X.
    const target = destIsDir ? normalizePath(`${dest}/${/(^|\/)\.\/*$/.test(raw) ? "." : baseName(raw)}`) : dest;
    const isDir = fs.isDirectory(src);
    if (isDir && !opts.recursive) {
      ctx.err(`${tool}: Skipped dir '${raw}'\n`);
      status = 1;
      continue;
    }
    if (target === src || target.startsWith(src + "/")) {
      if (!(isDir && target === src && /(^|\/)\.\/*$/.test(raw))) {
        ctx.err(`${tool}: '${raw}' is inside '${destRaw}'\n`);
        status = 1;
      }
      continue;
    }
    if (!fs.isDirectory(parentOf(target))) {
      ctx.err(`${tool}: '${destRaw}': No such file or directory\n`);
      status = 1;
      continue;
    }
    if (denied(ctx, tool, destRaw, target) || (opts.move && denied(ctx, tool, raw, src))) {
      status = 1;
      continue;
    }
    if (fs.stat(target) && opts.noClobber && !isDir) continue;
    if (fs.stat(target) && fs.isDirectory(target) !== isDir) {
      ctx.err(`${tool}: '${destRaw}': ${isDir ? "Not a directory" : "Is a directory"}\n`);
      status = 1;
      continue;
    }
    if (opts.move && !fs.stat(target)) {
      fs.rename(src, target);
      continue;
    }
    // Snapshot the tree first so copying a directory next to itself cannot feed on its own output.
    const now = nowSec(ctx);
    for (const node of fs.walk(src)) {
      const to = target + node.path.slice(src.length);
      const perm = node.mode & 0o7777;
      if (node.dir) {
        if (!fs.isDirectory(to)) fs.mkdir(to, perm, opts.preserve ? node.mtimeSec : now);
        else if (opts.preserve) fs.setMode(to, perm);
      } else {
        if (fs.isDirectory(to)) continue;
        fs.write(to, node.data, perm, opts.preserve ? node.mtimeSec : now);
      }
    }
    if (opts.preserve) for (const node of fs.walk(src)) if (node.dir) fs.setMtime(target + node.path.slice(src.length), node.mtimeSec);
    if (opts.move) fs.remove(src, true);
  }
  return status;
}

/** `chmod [-R] MODE FILE…`: octal, or symbolic `[ugoa]*[+-=][rwxXst]*[,…]`. */
function chmod(args: string[], ctx: CommandContext): number {
  // A symbolic mode such as `-w` looks like a flag: take the first word that is a mode as the mode.
  const { flags, operands, bad } = parseArgs(args.filter((a) => !/^-[rwxXst]+$/.test(a) || a === "-R"), "Rvf");
  const dashMode = args.find((a) => /^-[rwxXst]+$/.test(a) && a !== "-R");
  if (bad) return fail(ctx, `chmod: Unknown option '${bad}'`, 1);
  const mode = dashMode ?? operands.shift();
  if (mode === undefined || operands.length === 0) return fail(ctx, "chmod: Need 2 arguments", 1);
  const apply = modeFunction(mode);
  if (!apply) return fail(ctx, `chmod: bad mode '${mode}'`, 1);
  let status = 0;
  for (const raw of operands) {
    const p = resolve(raw);
    if (!ctx.sys.fs.stat(p)) {
      ctx.err(`chmod: '${raw}': No such file or directory\n`);
      status = 1;
      continue;
    }
    if (denied(ctx, "chmod", raw, p)) {
      status = 1;
      continue;
    }
    const nodes = flags.has("R") ? ctx.sys.fs.walk(p) : [ctx.sys.fs.walk(p)[0]!];
    for (const n of nodes) ctx.sys.fs.setMode(n.path, apply(n.mode & 0o7777, n.dir));
  }
  return status;
}

function modeFunction(mode: string): ((perm: number, dir: boolean) => number) | undefined {
  if (/^[0-7]{1,4}$/.test(mode)) {
    const v = parseInt(mode, 8);
    return () => v;
  }
  const clauses = mode.split(",");
  const parsed: { who: number; op: string; bits: string }[] = [];
  for (const c of clauses) {
    const m = /^([ugoa]*)([-+=])([rwxXst]*)$/.exec(c);
    if (!m) return undefined;
    let who = 0;
    for (const w of m[1] || "a") who |= w === "u" ? 0o4700 : w === "g" ? 0o2070 : w === "o" ? 0o1007 : 0o7777;
    parsed.push({ who, op: m[2]!, bits: m[3]! });
  }
  return (perm, dir) => {
    let p = perm;
    for (const { who, op, bits } of parsed) {
      let mask = 0;
      for (const b of bits) {
        if (b === "r") mask |= 0o444;
        else if (b === "w") mask |= 0o222;
        else if (b === "x" || (b === "X" && (dir || (perm & 0o111) !== 0))) mask |= 0o111;
        else if (b === "s") mask |= 0o6000;
        else if (b === "t") mask |= 0o1000;
      }
      mask &= who;
      if (op === "+") p |= mask;
      else if (op === "-") p &= ~mask;
      else p = (p & ~who) | mask;
    }
    return p;
  };
}

const ACCOUNT = /^(root|system|shell|radio|bluetooth|graphics|input|audio|camera|log|compass|mount|wifi|adb|install|media|dhcp|sdcard_rw|media_rw|sdcard_r|everybody|cache|u\d+_a\d+(_cache)?|u\d+_i\d+|\d+)$/;

/** `chown [-R] USER[:GROUP] FILE…`: the accounts a device has; only root may give files away. Ownership itself is not kept. */
function chown(args: string[], ctx: CommandContext): number {
  const { operands, bad } = parseArgs(args, "RhHLPfv");
  if (bad) return fail(ctx, `chown: Unknown option '${bad}'`, 1);
  const owner = operands.shift();
  if (owner === undefined || operands.length === 0) return fail(ctx, "chown: Need 2 arguments", 1);
  const [user, group] = owner.split(/[:.]/, 2);
  if (user && !ACCOUNT.test(user)) return fail(ctx, `chown: bad user '${user}'`, 1);
  if (group && !ACCOUNT.test(group)) return fail(ctx, `chown: bad group '${group}'`, 1);
  let status = 0;
  for (const raw of operands) {
    const p = resolve(raw);
    if (!ctx.sys.fs.stat(p)) {
      ctx.err(`chown: '${raw}': No such file or directory\n`);
      status = 1;
    } else if (!ctx.sys.shellIsRoot() || ctx.sys.writeDenied(p)) {
      ctx.err(`chown: '${raw}' to '${owner}': Operation not permitted\n`);
      status = 1;
    }
  }
  return status;
}

/** `restorecon [-R] [-D] [-F] [-v] PATH…`: SELinux labels are not modelled; the paths must exist. */
function restorecon(args: string[], ctx: CommandContext): number {
  const { operands, bad } = parseArgs(args, "RDFnrv0f");
  if (bad) return fail(ctx, `restorecon: invalid option -- '${bad}'`, 1);
  if (operands.length === 0) return fail(ctx, "usage: restorecon [-D] [-F] [-R] [-n] [-v] FILE...", 1);
  let status = 0;
  for (const raw of operands) {
    if (!ctx.sys.fs.stat(resolve(raw))) {
      ctx.err(`SELinux: Could not get canonical path for ${raw} restorecon: No such file or directory.\n`);
      status = 1;
    }
  }
  return status;
}

export const fileCommands: CommandTable = {
  cat: { latencyClass: "shell", run: cat },
  ls: { latencyClass: "shell", run: ls },
  rm: { latencyClass: "shell", run: rm },
  mkdir: { latencyClass: "shell", run: mkdir },
  touch: { latencyClass: "shell", run: touch },
  cp: { latencyClass: "shell", run: cp },
  mv: { latencyClass: "shell", run: mv },
  chmod: { latencyClass: "shell", run: chmod },
  chown: { latencyClass: "shell", run: chown },
  restorecon: { latencyClass: "shell", run: restorecon },
};
