/**
 * Executes parsed command lines against the device's command table.
 *
 * Supported: lists, `&&` `||` `!`, pipes, redirections (`>file`, `>>file`, `<file`, `2>/dev/null`,
 * `2>&1`, `>&2`), variables (`NAME=value`, `export`, `unset`, `$NAME`, `$?`), pathname expansion,
 * `exec <cmd>`, `if`/`elif`/`else`, `while`/`until`, `for … in`, `{ …; }`. Loops are bounded: one
 * command line (or one line of an interactive session) runs at most MAX_LOOP_ITERATIONS loop
 * iterations in all, then the line ends with exit status 1 and a message on stderr.
 */
import { parseCommandLine, type AndOr, type Command, type CommandList, type Pipeline, type Redirection, type SimpleCommand, type WhileLoop, type ForLoop, type IfClause, type Word } from "./parser.ts";
import { ShellSyntaxError } from "./lexer.ts";
import { PipeChannel } from "./pipe.ts";
import { ExpansionTooLong, expandToString, expandWord } from "./expand.ts";
import { nullSink, emptyStdin, sleepMs, stdinLines, toBytes, concatBytes, type CommandIO, type Sink } from "./io.ts";
import { ExitRequest, type CommandContext, type CommandSpec, type LatencyClass } from "../commands/types.ts";
import type { AndroidSystem } from "../system/android-system.ts";

export interface ShellHost {
  readonly sys: AndroidSystem;
  findCommand(name: string): CommandSpec | undefined;
  latencyMs(cls: LatencyClass): number;
}

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const BIN_DIRS = ["/system/bin/", "/system/xbin/", "/vendor/bin/", "/bin/"];
/** Loop iterations one command line may run in all (nested loops count together). */
export const MAX_LOOP_ITERATIONS = 10_000;
/** pid `$$` reports (the shell adbd started). */
const SHELL_PID = "4470";

/** The environment adbd gives a shell on an emulator (the parts scripts read). */
const DEFAULT_VARS: readonly [string, string][] = [
  ["HOME", "/"],
  ["PATH", "/product/bin:/apex/com.android.runtime/bin:/apex/com.android.art/bin:/system_ext/bin:/system/bin:/system/xbin:/odm/bin:/vendor/bin:/vendor/xbin"],
  ["ANDROID_DATA", "/data"],
  ["ANDROID_ROOT", "/system"],
  ["ANDROID_STORAGE", "/storage"],
  ["EXTERNAL_STORAGE", "/sdcard"],
  ["TMPDIR", "/data/local/tmp"],
  ["SHELL", "/bin/sh"],
];

/** One shell's variables, last status and loop budget. */
export class ShellState {
  readonly vars: Map<string, string>;
  status = 0;
  /** Loop iterations left for the command line; shared with child shells (pipeline stages, `sh -c`). */
  readonly loops: { left: number };

  constructor(parent?: ShellState) {
    this.vars = new Map(parent ? parent.vars : DEFAULT_VARS);
    this.loops = parent ? parent.loops : { left: MAX_LOOP_ITERATIONS };
  }

  get(name: string): string | undefined {
    switch (name) {
      case "?":
        return String(this.status);
      case "$":
        return SHELL_PID;
      case "#":
        return "0";
      case "0":
        return "/system/bin/sh";
      case "@":
      case "*":
      case "!":
        return "";
    }
    return this.vars.get(name);
  }
}

export class ShellInterpreter {
  constructor(private readonly host: ShellHost) {}

  /** Runs one command line; resolves with its exit status. An empty line is an interactive session. */
  async run(line: string, io: CommandIO): Promise<number> {
    const state = new ShellState();
    if (line.trim() === "") return this.interactive(io, state);
    try {
      return await this.execLine(line, io, state);
    } catch (e) {
      if (e instanceof ExitRequest) return e.exitCode;
      throw e;
    }
  }

  /** Reads command lines from stdin (no prompt, no echo, LF only), until `exit` or EOF; variables carry over. */
  private async interactive(io: CommandIO, state: ShellState): Promise<number> {
    try {
      for await (const line of stdinLines(io.stdin, io.signal)) {
        state.loops.left = MAX_LOOP_ITERATIONS;
        await this.execLine(line, { ...io, stdin: emptyStdin }, state);
      }
    } catch (e) {
      if (e instanceof ExitRequest) return e.exitCode;
      throw e;
    }
    return state.status;
  }

  /** Parses and runs in `state` (a new shell when not given); lets ExitRequest escape so `exit` ends an interactive session. */
  async execLine(line: string, io: CommandIO, state: ShellState = new ShellState()): Promise<number> {
    try {
      return await this.parseAndRun(line, io, state);
    } catch (e) {
      if (!(e instanceof ExpansionTooLong)) throw e;
      // Bounded like the loops: the line ends, with status 1.
      io.err(`/system/bin/sh: ${e.message} (the simulated shell's bound)\n`);
      state.status = 1;
      throw new ExitRequest(1);
    }
  }

  private async parseAndRun(line: string, io: CommandIO, state: ShellState): Promise<number> {
    let ast: CommandList;
    try {
      ast = parseCommandLine(line);
    } catch (e) {
      if (e instanceof ShellSyntaxError) {
        io.err(`/system/bin/sh: syntax error: ${e.message}\n`);
        state.status = 1;
        return 1;
      }
      throw e;
    }
    return this.runList(ast, io, state);
  }

  private async runList(list: CommandList, io: CommandIO, state: ShellState): Promise<number> {
    let status = state.status;
    for (const item of list.items) {
      if (io.signal.aborted) break;
      status = await this.runAndOr(item, io, state);
    }
    return status;
  }

  private async runAndOr(node: AndOr, io: CommandIO, state: ShellState): Promise<number> {
    let status = await this.runPipeline(node.first, io, state);
    for (const { op, pipeline } of node.rest) {
      if (io.signal.aborted) break;
      if ((op === "&&" && status === 0) || (op === "||" && status !== 0)) status = await this.runPipeline(pipeline, io, state);
    }
    return status;
  }

  private async runPipeline(p: Pipeline, io: CommandIO, state: ShellState): Promise<number> {
    let status = p.commands.length === 1 ? await this.runCommand(p.commands[0]!, io, state) : await this.runStages(p, io, state);
    if (p.negate) status = status === 0 ? 1 : 0;
    state.status = status;
    return status;
  }

  private async runStages(p: Pipeline, io: CommandIO, state: ShellState): Promise<number> {
    // Each stage can be stopped on its own: when a reader finishes, the stages feeding it are
    // stopped too (what SIGPIPE does to `logcat | head -n 1`).
    const stops = p.commands.map(() => new AbortController());
    const onOuterAbort = (): void => stops.forEach((c) => c.abort());
    if (io.signal.aborted) onOuterAbort();
    io.signal.addEventListener("abort", onOuterAbort, { once: true });
    const channels = p.commands.slice(1).map((_, i) => new PipeChannel(stops[i + 1]!.signal));
    const stages = p.commands.map(async (cmd, i) => {
      const stageIO: CommandIO = {
        out: i < channels.length ? channels[i]!.write : io.out,
        err: io.err,
        stdin: i === 0 ? io.stdin : channels[i - 1]!,
        signal: stops[i]!.signal,
      };
      // Each stage is a subshell: its variables and `exit` stay its own; the loop budget is shared.
      const sub = new ShellState(state);
      sub.status = state.status;
      try {
        return await this.runCommand(cmd, stageIO, sub);
      } catch (e) {
        if (e instanceof ExitRequest) return e.exitCode;
        throw e;
      } finally {
        if (i < channels.length) channels[i]!.close();
        for (let up = 0; up < i; up++) stops[up]!.abort();
      }
    });
    try {
      const codes = await Promise.all(stages);
      return codes[codes.length - 1]!;
    } finally {
      io.signal.removeEventListener("abort", onOuterAbort);
    }
  }

  private runCommand(cmd: Command, io: CommandIO, state: ShellState): Promise<number> {
    switch (cmd.type) {
      case "simple":
        return this.runSimple(cmd, io, state);
      case "while":
        return this.withRedirections(cmd.redirs, io, state, (rio) => this.runWhile(cmd, rio, state));
      case "for":
        return this.withRedirections(cmd.redirs, io, state, (rio) => this.runFor(cmd, rio, state));
      case "if":
        return this.withRedirections(cmd.redirs, io, state, (rio) => this.runIf(cmd, rio, state));
      case "group":
        return this.withRedirections(cmd.redirs, io, state, (rio) => this.runList(cmd.body, rio, state));
    }
  }

  /** Counts one loop iteration against the line's budget; past it, the line ends (exit status 1). */
  private async iterate(io: CommandIO, state: ShellState): Promise<void> {
    if (state.loops.left <= 0) {
      io.err(`/system/bin/sh: loop stopped: more than ${MAX_LOOP_ITERATIONS} iterations in one command line (the simulated shell's bound)\n`);
      throw new ExitRequest(1);
    }
    state.loops.left--;
    // Let timers and the host's close reach us even if the body never waits (`while true; do echo; done`).
    await new Promise<void>((resolve) => setImmediate(resolve));
  }

  private async runIf(cmd: IfClause, io: CommandIO, state: ShellState): Promise<number> {
    for (const b of cmd.branches) {
      if (io.signal.aborted) return state.status;
      const c = await this.runList(b.cond, io, state);
      if (c === 0) return this.runList(b.body, io, state);
    }
    if (cmd.otherwise) return this.runList(cmd.otherwise, io, state);
    state.status = 0;
    return 0;
  }

  private async runWhile(loop: WhileLoop, io: CommandIO, state: ShellState): Promise<number> {
    let status = 0;
    for (;;) {
      if (io.signal.aborted) break;
      const c = await this.runList(loop.cond, io, state);
      if (loop.until ? c === 0 : c !== 0) break;
      // adbkit's waitBootComplete loop (`while getprop sys.boot_completed; do sleep 1; done`) never
      // ends on a real device; the client closes it after reading `1`. The simulated device is
      // always booted, so it ends the loop after the first `1`.
      if (!loop.until && isBootWait(loop.cond) && this.host.sys.props.get("sys.boot_completed") === "1") break;
      status = await this.runList(loop.body, io, state);
      await this.iterate(io, state);
    }
    state.status = status;
    return status;
  }

  private async runFor(loop: ForLoop, io: CommandIO, state: ShellState): Promise<number> {
    const items: string[] = [];
    for (const w of loop.items ?? []) items.push(...this.expand(w, state));
    let status = 0;
    for (const item of items) {
      if (io.signal.aborted) break;
      state.vars.set(loop.name, item);
      status = await this.runList(loop.body, io, state);
      await this.iterate(io, state);
    }
    state.status = status;
    return status;
  }

  private expand(word: Word, state: ShellState): string[] {
    return expandWord(word, state, this.host.sys.fs);
  }

  private async runSimple(cmd: SimpleCommand, io: CommandIO, state: ShellState): Promise<number> {
    // Leading NAME=value words: alone they set shell variables; before a command they are its
    // environment, which no simulated command reads.
    let i = 0;
    while (i < cmd.words.length && !cmd.words[i]!.parts[0]?.quoted && ASSIGNMENT.test(cmd.words[i]!.text)) i++;
    const assignments = cmd.words.slice(0, i).map((w) => {
      const text = expandToString(w, state);
      const eq = text.indexOf("=");
      return [text.slice(0, eq), text.slice(eq + 1)] as const;
    });
    let words: string[] = [];
    for (const w of cmd.words.slice(i)) words.push(...this.expand(w, state));
    return this.withRedirections(cmd.redirs, io, state, async (rio) => {
      if (words.length === 0) {
        for (const [k, v] of assignments) state.vars.set(k, v);
        return 0;
      }
      if (words[0] === "exec") words = words.slice(1);
      if (words.length === 0) return 0;
      const special = this.specialBuiltin(words, rio, state);
      if (special !== undefined) return special;
      const name = commandName(words[0]!);
      const spec = this.host.findCommand(name);
      if (!spec) {
        rio.err(`/system/bin/sh: ${words[0]}: inaccessible or not found\n`);
        return 127;
      }
      const delay = this.host.latencyMs(spec.latencyClass);
      if (delay > 0) await sleepMs(delay, rio.signal);
      const ctx: CommandContext = {
        ...rio,
        sys: this.host.sys,
        runScript: (line, sub) => this.execLine(line, sub, new ShellState(state)),
        subshell: () => {
          const child = new ShellState(state);
          return (line, sub) => this.execLine(line, sub, child);
        },
      };
      return await spec.run(words.slice(1), ctx);
    });
  }

  /** Builtins that change the shell itself: `export`, `unset`. undefined: not one of them. */
  private specialBuiltin(words: string[], io: CommandIO, state: ShellState): number | undefined {
    const [name, ...args] = words;
    if (name === "export" || name === "readonly") {
      for (const a of args) {
        if (a.startsWith("-")) continue;
        const eq = a.indexOf("=");
        const key = eq < 0 ? a : a.slice(0, eq);
        if (!NAME.test(key)) {
          io.err(`/system/bin/sh: ${name}: ${key}: is not an identifier\n`);
          return 1;
        }
        if (eq >= 0) state.vars.set(key, a.slice(eq + 1));
      }
      return 0;
    }
    if (name === "unset") {
      for (const a of args) if (!a.startsWith("-")) state.vars.delete(a);
      return 0;
    }
    return undefined;
  }

  /** Applies redirections left to right, runs `body`, then flushes `>file` output into the device fs. */
  private async withRedirections(redirs: Redirection[], io: CommandIO, state: ShellState, body: (rio: CommandIO) => Promise<number>): Promise<number> {
    if (redirs.length === 0) return body(io);
    const fds: Sink[] = [nullSink, io.out, io.err];
    let stdin = io.stdin;
    const files: { path: string; append: boolean; parts: Uint8Array[] }[] = [];
    for (const r of redirs) {
      if (r.fd > 2) continue; // descriptors beyond stderr do not exist here; ignore
      const target = expandToString(r.target, state);
      if (r.op === ">" || r.op === ">>") {
        if (target === "/dev/null") fds[r.fd] = nullSink;
        else {
          const denied = this.host.sys.writeDenied(target);
          if (denied) {
            io.err(`/system/bin/sh: can't create ${target}: ${denied}\n`);
            return 1;
          }
          const file = { path: target, append: r.op === ">>", parts: [] as Uint8Array[] };
          files.push(file);
          fds[r.fd] = (chunk) => file.parts.push(toBytes(chunk));
        }
      } else if (r.op === ">&") {
        if (target === "-") fds[r.fd] = nullSink;
        else if (target === "1" || target === "2") fds[r.fd] = fds[Number(target)]!;
        else {
          io.err(`/system/bin/sh: ${target}: bad file descriptor\n`);
          return 1;
        }
      } else if (r.op === "<") {
        const data = this.host.sys.fs.read(target);
        if (!data) {
          io.err(`/system/bin/sh: can't open ${target}: No such file or directory\n`);
          return 1;
        }
        stdin = { async *[Symbol.asyncIterator]() { yield data; } };
      }
    }
    const status = await body({ out: fds[1]!, err: fds[2]!, stdin, signal: io.signal });
    for (const f of files) {
      const prev = f.append ? (this.host.sys.fs.read(f.path) ?? new Uint8Array(0)) : new Uint8Array(0);
      this.host.sys.fs.write(f.path, concatBytes([prev, ...f.parts]), 0o644, Math.floor(this.host.sys.now() / 1000));
    }
    return status;
  }
}

function commandName(word: string): string {
  for (const dir of BIN_DIRS) if (word.startsWith(dir)) return word.slice(dir.length);
  return word;
}

function isBootWait(cond: CommandList): boolean {
  const only = cond.items.length === 1 && cond.items[0]!.rest.length === 0 ? cond.items[0]!.first.commands : [];
  const cmd = only.length === 1 ? only[0] : undefined;
  return cmd?.type === "simple" && cmd.words[0]?.text === "getprop" && cmd.words[1]?.text === "sys.boot_completed";
}
