/** Shell builtins and tiny toybox commands: echo, true, false, sleep, exit, export, sh, service, id. */
import { ExitRequest, fail, type CommandContext, type CommandTable } from "./types.ts";
import { emptyStdin, sleepMs, stdinLines } from "../shell/io.ts";

const KNOWN_SERVICES = new Set(["window", "package", "input", "display", "activity", "settings", "statusbar", "power", "SurfaceFlinger", "media.camera"]);

function unescapeEcho(text: string): { text: string; stop: boolean } {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c !== "\\" || i + 1 >= text.length) {
      out += c;
      continue;
    }
    const d = text[++i]!;
    if (d === "c") return { text: out, stop: true };
    out += ({ n: "\n", t: "\t", r: "\r", "\\": "\\", a: "\x07", b: "\b", f: "\f", v: "\v", e: "\x1b" } as Record<string, string>)[d] ?? "\\" + d;
  }
  return { text: out, stop: false };
}

export const builtinCommands: CommandTable = {
  echo: {
    latencyClass: "shell",
    run(args, ctx) {
      let newline = true;
      let escapes = false;
      while (args[0] && /^-[neE]+$/.test(args[0])) {
        const flag = args.shift()!;
        if (flag.includes("n")) newline = false;
        if (flag.includes("e")) escapes = true;
        if (flag.includes("E")) escapes = false;
      }
      let text = args.join(" ");
      if (escapes) {
        const r = unescapeEcho(text);
        text = r.text;
        if (r.stop) newline = false;
      }
      ctx.out(newline ? text + "\n" : text);
      return 0;
    },
  },
  true: { latencyClass: "shell", run: () => 0 },
  false: { latencyClass: "shell", run: () => 1 },
  ":": { latencyClass: "shell", run: () => 0 },
  sleep: {
    latencyClass: "shell",
    async run(args, ctx) {
      const secs = Number(args[0]);
      if (args.length !== 1 || !Number.isFinite(secs) || secs < 0) return fail(ctx, "usage: sleep SECONDS");
      await sleepMs(secs * 1000, ctx.signal);
      return 0;
    },
  },
  exit: {
    latencyClass: "shell",
    run(args) {
      const code = args[0] === undefined ? 0 : Number(args[0]);
      throw new ExitRequest(Number.isInteger(code) ? code & 0xff : 2);
    },
  },
  // `export` and `unset` change the shell itself: shell/interpreter.ts runs them before this table.
  sh: {
    latencyClass: "shell",
    async run(args, ctx) {
      if (args[0] === "-c" && args[1] !== undefined) {
        // A child shell: its `exit` ends only itself.
        try {
          return await ctx.runScript(args[1], ctx);
        } catch (e) {
          if (e instanceof ExitRequest) return e.exitCode;
          throw e;
        }
      }
      if (args.length === 0) return readCommands(ctx);
      return fail(ctx, "/system/bin/sh: only 'sh -c <command>' and 'sh' reading stdin are supported here", 2);
    },
  },
  service: {
    latencyClass: "shell",
    run(args, ctx) {
      if (args[0] === "check" && args[1]) {
        ctx.out(`Service ${args[1]}: ${KNOWN_SERVICES.has(args[1]) ? "found" : "not found"}\n`);
        return 0;
      }
      if (args[0] === "list") {
        [...KNOWN_SERVICES].forEach((s, i) => ctx.out(`${i}\t${s}: [android.os.IBinder]\n`));
        return 0;
      }
      return fail(ctx, "Usage: service [-h|-?]\n       service list\n       service check SERVICE");
    },
  },
  id: {
    latencyClass: "shell",
    run(args, ctx) {
      const root = ctx.sys.shellIsRoot();
      if (args[0] === "-u") ctx.out(root ? "0\n" : "2000\n");
      else if (args[0] === "-un" || args[0] === "-nu") ctx.out(root ? "root\n" : "shell\n");
      else if (root) ctx.out("uid=0(root) gid=0(root) groups=0(root),1004(input),1007(log),1011(adb),1015(sdcard_rw),1028(sdcard_r),3001(net_bt_admin),3002(net_bt),3003(inet),3006(net_bw_stats),3009(readproc),3011(uhid) context=u:r:su:s0\n");
      else ctx.out("uid=2000(shell) gid=2000(shell) groups=2000(shell),1004(input),1007(log),1011(adb),1015(sdcard_rw),1028(sdcard_r),3001(net_bt_admin),3002(net_bt),3003(inet),3006(net_bw_stats),3009(readproc),3011(uhid) context=u:r:shell:s0\n");
      return 0;
    },
  },
  whoami: {
    latencyClass: "shell",
    run(_args, ctx) {
      ctx.out(ctx.sys.shellIsRoot() ? "root\n" : "shell\n");
      return 0;
    },
  },
};

/**
 * `sh` with its commands on stdin (no terminal: no prompt, no echo): a line at a time, each without stdin of
 * its own, until `exit` or the end of input, as a shell reading from a pipe does.
 */
async function readCommands(ctx: CommandContext): Promise<number> {
  let status = 0;
  try {
    for await (const line of stdinLines(ctx.stdin, ctx.signal)) status = await ctx.runScript(line, { ...ctx, stdin: emptyStdin });
  } catch (e) {
    if (e instanceof ExitRequest) return e.exitCode;
    throw e;
  }
  return status;
}
