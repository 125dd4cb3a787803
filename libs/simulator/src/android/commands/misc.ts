/** Small tools scripts use around apps: `monkey -p <pkg> … 1` (launch), `pidof <pkg>`, `date [+FORMAT]`. */
import { fail, type CommandTable } from "./types.ts";

const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const pad = (n: number, w = 2): string => String(n).padStart(w, "0");

function formatDate(ms: number, format: string): string {
  const d = new Date(ms);
  const fields: Record<string, string> = {
    s: String(Math.floor(ms / 1000)),
    N: pad((ms % 1000) * 1_000_000, 9),
    Y: String(d.getUTCFullYear()),
    m: pad(d.getUTCMonth() + 1),
    d: pad(d.getUTCDate()),
    H: pad(d.getUTCHours()),
    M: pad(d.getUTCMinutes()),
    S: pad(d.getUTCSeconds()),
    a: DAYS[d.getUTCDay()]!,
    b: MONTHS[d.getUTCMonth()]!,
    Z: "UTC",
    "%": "%",
  };
  return format.replace(/%(.)/g, (m, f: string) => fields[f] ?? m);
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
      ctx.out("  bash arg: -p\n  bash arg: " + pkg.name + "\nEvents injected: 1\n## Network stats: elapsed time=12ms (0ms mobile, 0ms wifi, 12ms not connected)\n");
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
  date: {
    latencyClass: "shell",
    run(args, ctx) {
      const fmt = args.find((a) => a.startsWith("+"));
      if (args.some((a) => !a.startsWith("+") && a !== "-u")) return fail(ctx, "date: setting the time is not permitted", 1);
      ctx.out(formatDate(ctx.sys.now(), fmt ? fmt.slice(1) : "%a %b %d %H:%M:%S %Z %Y") + "\n");
      return 0;
    },
  },
};
