/** Shell builtins and tiny toybox commands: echo, true, false, sleep, exit, sh, service, id, whoami. */
import { ExitRequest, fail, type CommandContext, type CommandTable } from "./types.ts";
import { emptyStdin, sleepMs, stdinLines } from "../shell/io.ts";
import { isKnownTimeZone } from "../system/clock.ts";

const KNOWN_SERVICES = new Set(["window", "package", "input", "display", "activity", "alarm", "settings", "statusbar", "power", "wifi", "bluetooth_manager", "SurfaceFlinger", "media.camera"]);
/** IAlarmManager's transaction code for setTimeZone (Android 10: set 1, setTime 2, setTimeZone 3). */
const ALARM_SET_TIME_ZONE = 3;
const EMPTY_REPLY = "Result: Parcel(00000000    '....')\n";

/** The arguments of `service call`: `i32 N`, `i64 N`, `f N`, `d N`, `s16 STR`, `null`; undefined when malformed. */
function callArgs(args: string[]): { type: string; value: string | undefined }[] | undefined {
  const out: { type: string; value: string | undefined }[] = [];
  for (let i = 0; i < args.length; i++) {
    const type = args[i]!;
    if (type === "null") {
      out.push({ type, value: undefined });
      continue;
    }
    if (!["i32", "i64", "f", "d", "s16"].includes(type) || args[i + 1] === undefined) return undefined;
    out.push({ type, value: args[++i] });
  }
  return out;
}

/**
 * `service list|check|call`. `call alarm 3 s16 TZ` is AlarmManager's setTimeZone (what AndroidWorld
 * sends): it sets `persist.sys.timezone` (an ID the zone data does not know becomes `GMT`, as Java's
 * TimeZone.getTimeZone answers); other calls to a known service answer an empty reply.
 */
function service(args: string[], ctx: CommandContext): number {
  const [sub, name, code, ...rest] = args;
  if (sub === "check" && name) {
    ctx.out(`Service ${name}: ${KNOWN_SERVICES.has(name) ? "found" : "not found"}\n`);
    return 0;
  }
  if (sub === "list") {
    ctx.out(`Found ${KNOWN_SERVICES.size} services:\n`);
    [...KNOWN_SERVICES].forEach((s, i) => ctx.out(`${i}\t${s}: [android.os.IBinder]\n`));
    return 0;
  }
  if (sub === "call" && name !== undefined && code !== undefined) {
    if (!KNOWN_SERVICES.has(name)) return fail(ctx, `service: Service ${name} does not exist`, 10);
    const parcel = callArgs(rest);
    if (!/^\d+$/.test(code) || !parcel) return fail(ctx, "service: unknown option or argument in call", 1);
    if (name === "alarm" && Number(code) === ALARM_SET_TIME_ZONE && parcel[0]?.type === "s16" && parcel[0].value) {
      const tz = isKnownTimeZone(parcel[0].value) ? parcel[0].value : "GMT";
      if (ctx.sys.props.get("persist.sys.timezone") !== tz) ctx.sys.props.set("persist.sys.timezone", tz);
    }
    ctx.out(EMPTY_REPLY);
    return 0;
  }
  return fail(ctx, "Usage: service [-h|-?]\n       service list\n       service check SERVICE\n       service call SERVICE CODE [i32 N | i64 N | f N | d N | s16 STR | null] ...");
}

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
  service: { latencyClass: "shell", run: service },
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
    const run = ctx.subshell();
    for await (const line of stdinLines(ctx.stdin, ctx.signal)) status = await run(line, { ...ctx, stdin: emptyStdin });
  } catch (e) {
    if (e instanceof ExitRequest) return e.exitCode;
    throw e;
  }
  return status;
}
