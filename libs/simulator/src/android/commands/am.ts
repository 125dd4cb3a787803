/**
 * `am`: start (-W, -S, intent extras), force-stop, kill, crash, broadcast, start-service,
 * stack list | remove <id>, task lock <id> | stop, get-current-user; `start -a ACTION` resolves through
 * the package manager's intent filters. Output shapes follow Android 9/10.
 */
import { fail, stripUser, type CommandContext, type CommandTable } from "./types.ts";
import { parseIntentArgs, describeIntent, type IntentSpec } from "./intent-args.ts";
import { parseComponent, shortComponent, type ComponentName } from "../system/components.ts";

/** Options of `am start` that take a value we ignore. */
const START_VALUE_OPTIONS = new Set(["--user", "-R", "-P", "--start-profiler", "--sampling", "--streaming", "--attach-agent", "--attach-agent-bind", "--windowingMode", "--activityType", "--display", "--task", "--receiver-permission"]);
const START_FLAG_OPTIONS = new Set(["-D", "-N", "--track-allocation", "--task-overlay", "--lock-task", "--allow-background-activity-starts", "--suspend"]);

function resolveComponent(ctx: CommandContext, intent: IntentSpec): ComponentName | "home" | string {
  if (intent.component) {
    const c = parseComponent(intent.component);
    return c ?? `Error: Bad component name: ${intent.component}`;
  }
  if (intent.categories.includes("android.intent.category.HOME")) return "home";
  // An action: the activity whose intent filter takes it (the package manager's resolution).
  const resolved = ctx.sys.packages.resolveActivity(intent);
  if (resolved) return resolved;
  // A package named with any other action gets its launcher activity (simulated apps declare no other
  // filters; AndroidEnv's start_intent sends `-a VIEW -d URI PKG`).
  if (intent.packageName) {
    const pkg = ctx.sys.packages.get(intent.packageName);
    if (pkg?.activities[0]) return { packageName: pkg.name, className: pkg.activities[0] };
  }
  return `Error: Activity not started, unable to resolve ${describeIntent(intent, undefined)}`;
}

function amStart(args: string[], ctx: CommandContext): number {
  let wait = false;
  let forceStop = false;
  const intent = parseIntentArgs(args, (opt) => {
    if (opt === "-W") return (wait = true), 0;
    if (opt === "-S") return (forceStop = true), 0;
    if (START_FLAG_OPTIONS.has(opt)) return 0;
    if (START_VALUE_OPTIONS.has(opt)) return 1;
    return -1;
  });
  if (typeof intent === "string") return fail(ctx, intent, 255);
  const target = resolveComponent(ctx, intent);
  if (typeof target === "string" && target !== "home") {
    ctx.out(`Starting: ${describeIntent(intent, undefined)}\n`);
    return fail(ctx, target, 1);
  }
  const am = ctx.sys.activities;
  if (target === "home") {
    ctx.out(`Starting: ${describeIntent(intent, undefined)}\n`);
    am.goHome(true);
    return 0;
  }
  const cmp = shortComponent(target);
  // An implicit intent is printed as given; the component it resolved to shows only in -W's Activity line.
  ctx.out(`Starting: ${describeIntent(intent, intent.component || intent.packageName ? cmp : undefined)}\n`);
  const outcome = am.start({ component: target, extras: intent.extras, forceStop });
  switch (outcome.kind) {
    case "no-such-activity":
      // As Android's am: both lines on stdout and exit status 0; callers must read the output.
      ctx.out("Error type 3\n");
      ctx.out(`Error: Activity class {${target.packageName}/${target.className}} does not exist.\n`);
      return 0;
    case "home":
      return 0;
    case "brought-to-front":
      ctx.out("Warning: Activity not started, its current task has been brought to the front\n");
      if (wait) ctx.out(`Status: ok\nLaunchState: UNKNOWN (0)\nActivity: ${cmp}\nTotalTime: 0\nWaitTime: 3\nComplete\n`);
      return 0;
    case "started":
      if (wait) {
        const t = outcome.totalTimeMs;
        ctx.out(`Status: ok\nLaunchState: ${t > 100 ? "COLD" : "HOT"}\nActivity: ${cmp}\nTotalTime: ${t}\nWaitTime: ${t + 4}\nComplete\n`);
      }
      return 0;
  }
}

function amBroadcast(args: string[], ctx: CommandContext): number {
  const intent = parseIntentArgs(args, (opt) => (opt === "--user" || opt === "--receiver-permission" ? 1 : -1));
  if (typeof intent === "string") return fail(ctx, intent, 255);
  const cmp = intent.component ? parseComponent(intent.component) : undefined;
  const described = describeIntent({ ...intent, flags: intent.flags ?? "0x400000" }, cmp ? shortComponent(cmp) : undefined);
  ctx.out(`Broadcasting: ${described}\n`);
  ctx.sys.sendBroadcast({ ...(intent.action !== undefined ? { action: intent.action } : {}), ...(cmp ? { component: cmp } : {}), extras: new Map(Object.entries(intent.extras)) });
  ctx.out("Broadcast completed: result=0\n");
  return 0;
}

function amTask(args: string[], ctx: CommandContext): number {
  const am = ctx.sys.activities;
  if (args[0] === "lock" && args[1] === "stop") {
    am.unlockTask();
    return 0;
  }
  if (args[0] === "lock" && args[1] !== undefined && /^\d+$/.test(args[1])) {
    if (am.lockTask(Number(args[1]))) return 0;
    return fail(ctx, `Exception occurred while executing 'task':\njava.lang.IllegalArgumentException: Invalid task, not in foreground: ${args[1]}`, 255);
  }
  return fail(ctx, "Error: usage: am task lock <TASK_ID> | am task lock stop", 255);
}

function am(argsIn: string[], ctx: CommandContext): number {
  const [sub, ...args] = argsIn;
  const sys = ctx.sys;
  switch (sub) {
    case "start":
    case "start-activity":
      return amStart(args, ctx);
    case "force-stop":
    case "stop-app": {
      const [pkg] = stripUser(args);
      if (!pkg) return fail(ctx, "Error: no package specified", 255);
      sys.activities.forceStop(pkg);
      return 0;
    }
    case "kill": {
      const [pkg] = stripUser(args);
      if (!pkg) return fail(ctx, "Error: no package specified", 255);
      // Only background processes are killed by `am kill`.
      const front = sys.activities.foregroundProcess();
      if (front?.packageName !== pkg) sys.activities.forceStop(pkg);
      return 0;
    }
    case "crash": {
      const [target] = stripUser(args);
      const front = sys.activities.foregroundProcess();
      if (front && (front.packageName === target || String(front.pid) === target)) sys.activities.crashForeground();
      else if (target) sys.activities.forceStop(target);
      return 0;
    }
    case "broadcast":
      return amBroadcast(args, ctx);
    case "startservice":
    case "start-service":
    case "start-foreground-service": {
      const intent = parseIntentArgs(args, (opt) => (opt === "--user" ? 1 : -1));
      if (typeof intent === "string") return fail(ctx, intent, 255);
      ctx.out(`Starting service: ${describeIntent(intent, intent.component)}\n`);
      return 0;
    }
    case "stack":
      if (args[0] === "list") {
        ctx.out(sys.activities.stackList(sys.screen.width, sys.screen.height));
        return 0;
      }
      if (args[0] === "remove") {
        if (args[1] === undefined || !/^\d+$/.test(args[1])) return fail(ctx, `Error: bad stack id: ${args[1] ?? ""}`, 255);
        if (sys.activities.removeStack(Number(args[1])) === "not-standard") {
          return fail(ctx, "Exception occurred while executing 'stack':\njava.lang.IllegalArgumentException: Removing non-standard stack is not allowed.", 255);
        }
        return 0;
      }
      return fail(ctx, `Error: unknown stack command: ${args[0] ?? ""}`, 255);
    case "task":
      return amTask(args, ctx);
    case "get-current-user":
      ctx.out("0\n");
      return 0;
    case undefined:
      return fail(ctx, "Activity manager (activity) commands:\n  start [-W] [-S] <INTENT>\n  force-stop <PACKAGE>\n  broadcast <INTENT>\n  stack list\n  task lock <TASK_ID> | task lock stop", 0);
    default:
      return fail(ctx, `Unknown command: ${sub}`, 255);
  }
}

export const amCommands: CommandTable = {
  am: { latencyClass: "am", run: am },
};
