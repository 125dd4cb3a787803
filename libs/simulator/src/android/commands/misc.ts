/** Small tools scripts use around apps: `monkey -p <pkg> … 1` (launch), `pidof <pkg>`, `date [+FORMAT] [SET]`. */
import { fail, type CommandContext, type CommandTable } from "./types.ts";
import { fromLocalTime, localTime, offsetString } from "../system/clock.ts";

const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const DAY_NAMES = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const MONTH_NAMES = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const pad = (n: number, w = 2, c = "0"): string => String(n).padStart(w, c);
/** toybox date's output when no format is given. */
export const DEFAULT_DATE_FORMAT = "%a %b %e %H:%M:%S %Z %Y";

/** strftime over the device's local time (toybox date's fields). */
export function formatDate(ms: number, format: string, tz: string): string {
  const t = localTime(ms, tz);
  const startOfYear = Date.UTC(t.year, 0, 1);
  const dayOfYear = Math.floor((Date.UTC(t.year, t.month - 1, t.day) - startOfYear) / 86_400_000) + 1;
  const h12 = t.hour % 12 === 0 ? 12 : t.hour % 12;
  const fields: Record<string, string> = {
    s: String(Math.floor(ms / 1000)),
    N: pad(t.ms * 1_000_000, 9),
    Y: String(t.year),
    C: pad(Math.floor(t.year / 100)),
    y: pad(t.year % 100),
    m: pad(t.month),
    d: pad(t.day),
    e: pad(t.day, 2, " "),
    H: pad(t.hour),
    k: pad(t.hour, 2, " "),
    I: pad(h12),
    l: pad(h12, 2, " "),
    M: pad(t.minute),
    S: pad(t.second),
    p: t.hour < 12 ? "AM" : "PM",
    a: DAYS[t.weekday]!,
    A: DAY_NAMES[t.weekday]!,
    b: MONTHS[t.month - 1]!,
    h: MONTHS[t.month - 1]!,
    B: MONTH_NAMES[t.month - 1]!,
    j: pad(dayOfYear, 3),
    u: String(t.weekday === 0 ? 7 : t.weekday),
    w: String(t.weekday),
    Z: t.abbreviation,
    z: offsetString(t.offsetMinutes),
    n: "\n",
    t: "\t",
    "%": "%",
  };
  fields.D = `${fields.m}/${fields.d}/${fields.y}`;
  fields.F = `${fields.Y}-${fields.m}-${fields.d}`;
  fields.T = `${fields.H}:${fields.M}:${fields.S}`;
  fields.R = `${fields.H}:${fields.M}`;
  fields.c = `${fields.a} ${fields.b} ${fields.e} ${fields.T} ${fields.Y}`;
  return format.replace(/%(.)/g, (m, f: string) => fields[f] ?? m);
}

/** toybox's SET argument: `MMDDhhmm[[CC]YY][.ss]`, local time; undefined when malformed. */
function parseSetDate(arg: string, nowMs: number, tz: string): number | undefined {
  const m = /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2}|\d{4})?(?:\.(\d{2}))?$/.exec(arg);
  if (!m) return undefined;
  const [, mo, dd, hh, mi, yy, ss] = m;
  let year = localTime(nowMs, tz).year;
  if (yy !== undefined) year = yy.length === 4 ? Number(yy) : Number(yy) < 69 ? 2000 + Number(yy) : 1900 + Number(yy);
  const month = Number(mo);
  const day = Number(dd);
  const hour = Number(hh);
  const minute = Number(mi);
  const second = ss === undefined ? 0 : Number(ss);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return undefined;
  const ms = fromLocalTime(tz, year, month, day, hour, minute, second);
  // 31 February and the like do not exist.
  if (localTime(ms, tz).day !== day) return undefined;
  return ms;
}

/** `date [-u] [+FORMAT] [MMDDhhmm[[CC]YY][.ss]]`: shows the device clock; setting it needs root, then prints the new time. */
function date(args: string[], ctx: CommandContext): number {
  let utc = false;
  let format: string | undefined;
  let set: string | undefined;
  for (const a of args) {
    if (a === "-u") utc = true;
    else if (a.startsWith("+")) format = a.slice(1);
    else if (a.startsWith("-")) return fail(ctx, `date: Unknown option '${a.slice(1, 2)}'`, 1);
    else if (set === undefined) set = a;
    else return fail(ctx, `date: Max 1 argument > ${args.length - 1}`, 1);
  }
  const tz = utc ? "UTC" : ctx.sys.timeZone();
  let when = ctx.sys.now();
  if (set !== undefined) {
    const ms = parseSetDate(set, when, tz);
    if (ms === undefined) return fail(ctx, `date: bad date '${set}'`, 1);
    if (!ctx.sys.shellIsRoot()) return fail(ctx, "date: cannot set date: Operation not permitted", 1);
    ctx.sys.setClock(ms);
    when = ms;
  }
  ctx.out(formatDate(when, format ?? DEFAULT_DATE_FORMAT, tz) + "\n");
  return 0;
}

export const miscCommands: CommandTable = {
  monkey: {
    latencyClass: "am",
    run(args, ctx) {
      // Only the launch idiom: `monkey -p <pkg> [-c android.intent.category.LAUNCHER] <count>`.
      const p = args.indexOf("-p");
      const name = p >= 0 ? args[p + 1] : undefined;
      const pkg = name ? ctx.sys.packages.get(name) : undefined;
      if (!pkg?.activities[0]) {
        ctx.out(`** No activities found to run, monkey aborted.\n`);
        return 252;
      }
      ctx.sys.activities.start({ component: { packageName: pkg.name, className: pkg.activities[0] }, extras: {}, forceStop: false });
      // The monkey wrapper script echoes its words, then Monkey itself lists them and the package.
      ctx.out(args.map((a) => `  bash arg: ${a}\n`).join("") + `args: [${args.join(", ")}]\n` + args.map((a) => ` arg: "${a}"\n`).join("") + `data="${pkg.name}"\n`);
      ctx.out("Events injected: 1\n## Network stats: elapsed time=12ms (0ms mobile, 0ms wifi, 12ms not connected)\n");
      return 0;
    },
  },
  pidof: {
    latencyClass: "shell",
    run(args, ctx) {
      const pids = ctx.sys.activities
        .allTasks()
        .filter((t) => args.includes(t.process.packageName))
        .map((t) => t.process.pid);
      if (pids.length === 0) return 1;
      ctx.out(pids.join(" ") + "\n");
      return 0;
    },
  },
  date: { latencyClass: "shell", run: date },
};
