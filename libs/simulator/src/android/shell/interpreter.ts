/**
 * Executes parsed command lines against the device's command table.
 *
 * Supported: `;` `&&` `||` `|`, redirections (`>file`, `>>file`, `<file`, `2>/dev/null`, `2>&1`,
 * `>&2`), leading `NAME=value` words (ignored: this shell has no variables), `exec <cmd>`, and
 * `while … do … done`. No expansion of any kind is performed (see lexer.ts).
 */
import { parseCommandLine, type AndOr, type Command, type CommandList, type Pipeline, type Redirection, type SimpleCommand, type WhileLoop } from "./parser.ts";
import { ShellSyntaxError } from "./lexer.ts";
import { PipeChannel } from "./pipe.ts";
import { nullSink, emptyStdin, sleepMs, stdinLines, toBytes, concatBytes, type CommandIO, type Sink } from "./io.ts";
import { ExitRequest, type CommandContext, type CommandSpec, type LatencyClass } from "../commands/types.ts";
import type { AndroidSystem } from "../system/android-system.ts";

export interface ShellHost {
  readonly sys: AndroidSystem;
  findCommand(name: string): CommandSpec | undefined;
  latencyMs(cls: LatencyClass): number;
}

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;
const BIN_DIRS = ["/system/bin/", "/system/xbin/", "/vendor/bin/", "/bin/"];

export class ShellInterpreter {
  constructor(private readonly host: ShellHost) {}

  /** Runs one command line; resolves with its exit status. An empty line is an interactive session. */
  async run(line: string, io: CommandIO): Promise<number> {
    if (line.trim() === "") return this.interactive(io);
    try {
      return await this.execLine(line, io);
    } catch (e) {
      if (e instanceof ExitRequest) return e.exitCode;
      throw e;
    }
  }

  /** Reads command lines from stdin (no prompt, no echo, LF only), until `exit` or EOF. */
  private async interactive(io: CommandIO): Promise<number> {
    let status = 0;
    try {
      for await (const line of stdinLines(io.stdin, io.signal)) {
        status = await this.execLine(line, { ...io, stdin: emptyStdin });
      }
    } catch (e) {
      if (e instanceof ExitRequest) return e.exitCode;
      throw e;
    }
    return status;
  }

  /** Parses and runs; lets ExitRequest escape so `exit` ends an interactive session. */
  async execLine(line: string, io: CommandIO): Promise<number> {
    let ast: CommandList;
    try {
      ast = parseCommandLine(line);
    } catch (e) {
      if (e instanceof ShellSyntaxError) {
        io.err(`/system/bin/sh: syntax error: ${e.message}\n`);
        return 1;
      }
      throw e;
    }
    return this.runList(ast, io);
  }

  private async runList(list: CommandList, io: CommandIO): Promise<number> {
    let status = 0;
    for (const item of list.items) {
      if (io.signal.aborted) break;
      status = await this.runAndOr(item, io);
    }
    return status;
  }

  private async runAndOr(node: AndOr, io: CommandIO): Promise<number> {
    let status = await this.runPipeline(node.first, io);
    for (const { op, pipeline } of node.rest) {
      if (io.signal.aborted) break;
      if ((op === "&&" && status === 0) || (op === "||" && status !== 0)) status = await this.runPipeline(pipeline, io);
    }
    return status;
  }

  private async runPipeline(p: Pipeline, io: CommandIO): Promise<number> {
    if (p.commands.length === 1) return this.runCommand(p.commands[0]!, io);
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
      try {
        return await this.runCommand(cmd, stageIO);
      } catch (e) {
        // Each stage is a subshell: `exit` there ends only that stage.
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

  private runCommand(cmd: Command, io: CommandIO): Promise<number> {
    return cmd.type === "while" ? this.runWhile(cmd, io) : this.runSimple(cmd, io);
  }

  private async runWhile(loop: WhileLoop, io: CommandIO): Promise<number> {
    return this.withRedirections(loop.redirs, io, async (rio) => {
      for (;;) {
        if (rio.signal.aborted) break;
        const c = await this.runList(loop.cond, rio);
        if (c !== 0) break;
        // adbkit's waitBootComplete loop (`while getprop sys.boot_completed; do sleep 1; done`) never
        // ends on a real device; the client closes it after reading `1`. The simulated device is
        // always booted, so it ends the loop after the first `1`.
        if (isBootWait(loop.cond) && this.host.sys.props.get("sys.boot_completed") === "1") break;
        await this.runList(loop.body, rio);
        // Let timers and the host's close reach us even if the body never waits (`while true; do echo; done`).
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      return 0;
    });
  }

  private async runSimple(cmd: SimpleCommand, io: CommandIO): Promise<number> {
    return this.withRedirections(cmd.redirs, io, async (rio) => {
      let words = cmd.words;
      let i = 0;
      while (i < words.length && ASSIGNMENT.test(words[i]!)) i++;
      words = words.slice(i);
      if (words[0] === "exec") words = words.slice(1);
      if (words.length === 0) return 0;
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
        runScript: (line, sub) => this.execLine(line, sub),
      };
      return await spec.run(words.slice(1), ctx);
    });
  }

  /** Applies redirections left to right, runs `body`, then flushes `>file` output into the device fs. */
  private async withRedirections(redirs: Redirection[], io: CommandIO, body: (rio: CommandIO) => Promise<number>): Promise<number> {
    if (redirs.length === 0) return body(io);
    const fds: Sink[] = [nullSink, io.out, io.err];
    let stdin = io.stdin;
    const files: { path: string; append: boolean; parts: Uint8Array[] }[] = [];
    for (const r of redirs) {
      if (r.fd > 2) continue; // descriptors beyond stderr do not exist here; ignore
      if (r.op === ">" || r.op === ">>") {
        if (r.target === "/dev/null") fds[r.fd] = nullSink;
        else {
          const file = { path: r.target, append: r.op === ">>", parts: [] as Uint8Array[] };
          files.push(file);
          fds[r.fd] = (chunk) => file.parts.push(toBytes(chunk));
        }
      } else if (r.op === ">&") {
        if (r.target === "-") fds[r.fd] = nullSink;
        else if (r.target === "1" || r.target === "2") fds[r.fd] = fds[Number(r.target)]!;
        else {
          io.err(`/system/bin/sh: ${r.target}: bad file descriptor\n`);
          return 1;
        }
      } else if (r.op === "<") {
        const data = this.host.sys.fs.read(r.target);
        if (!data) {
          io.err(`/system/bin/sh: can't open ${r.target}: No such file or directory\n`);
          return 1;
        }
        stdin = { async *[Symbol.asyncIterator]() { yield data; } };
      }
    }
    const status = await body({ out: fds[1]!, err: fds[2]!, stdin, signal: io.signal });
    for (const f of files) {
      const prev = f.append ? (this.host.sys.fs.read(f.path) ?? new Uint8Array(0)) : new Uint8Array(0);
      this.host.sys.fs.write(f.path, concatBytes([prev, ...f.parts]), 0o644, Math.floor(Date.now() / 1000));
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
  return cmd?.type === "simple" && cmd.words[0] === "getprop" && cmd.words[1] === "sys.boot_completed";
}
