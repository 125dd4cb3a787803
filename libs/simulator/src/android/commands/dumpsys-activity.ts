/**
 * `dumpsys activity …`: `<pkg> [args]` prints each task of the package with its top activity and a
 * `View Hierarchy:` section (2 spaces per level) that the app-screen matcher of task-format.md §7.4
 * walks: `DecorView@…[MainActivity]` → `android.widget.LinearLayout{…}` → `android.widget.FrameLayout{… android:id/content}` → the app's views.
 * `activities` (and no argument) prints the activity stack with `mResumedActivity:`; `top` the task in front.
 */
import type { CommandContext } from "./types.ts";
import type { ViewNode } from "../app-contract.ts";
import { LAUNCHER_PID, type TaskRecord } from "../system/activity-manager.ts";
import { shortComponent, simpleClass, flatComponent } from "../system/components.ts";
import { LAUNCHER_ACTIVITY, LAUNCHER_PACKAGE } from "../system/package-manager.ts";
import { hashString } from "../system/rng.ts";

export function objectId(ctx: CommandContext, label: string): string {
  return ((hashString(label) ^ Math.imul(ctx.sys.seed | 0, 0x9e3779b1)) >>> 0).toString(16).padStart(7, "0").slice(-7);
}

function viewLine(ctx: CommandContext, v: ViewNode, path: string): string {
  const [l, t, r, b] = v.bounds.map(Math.round) as [number, number, number, number];
  const id = v.id ? ` #7f0${(hashString(v.id) & 0xfffff).toString(16).padStart(5, "0")} ${v.id}` : "";
  return `${v.cls}{${objectId(ctx, path)} V.E...... ........ ${l},${t}-${r},${b}${id}}`;
}

function printViews(ctx: CommandContext, v: ViewNode, depth: number, path: string, out: string[]): void {
  out.push(" ".repeat(depth * 2) + viewLine(ctx, v, path));
  (v.children ?? []).forEach((c, i) => printViews(ctx, c, depth + 1, `${path}/${i}`, out));
}

/** The window content of the task's top activity, wrapped like a PhoneWindow's decor. */
function decorTree(ctx: CommandContext, task: TaskRecord): { decor: string; content: ViewNode } {
  const { width: w, height: h } = ctx.sys.screen;
  const top = simpleClass(task.process.app.activity);
  const appRoot = task.process.app.viewHierarchy();
  const content: ViewNode = {
    cls: "android.widget.LinearLayout",
    bounds: [0, 0, w, h],
    children: [{ cls: "android.widget.FrameLayout", id: "android:id/content", bounds: [0, 0, w, h], children: [appRoot] }],
  };
  return { decor: `DecorView@${objectId(ctx, `decor/${task.taskId}/${top}`)}[${top}]`, content };
}

function printTask(ctx: CommandContext, task: TaskRecord, resumed: boolean): string {
  const am = ctx.sys.activities;
  const top = am.topComponent(task);
  const id = objectId(ctx, `activity/${task.taskId}/${top.className}`);
  const lines: string[] = [];
  lines.push(`TASK ${task.process.packageName} id=${task.taskId} userId=0`);
  lines.push(`  ACTIVITY ${shortComponent(top)} ${id} pid=${task.process.pid}`);
  lines.push(`    Local Activity ${id} State:`);
  lines.push(`      mResumed=${resumed} mStopped=${!resumed} mFinished=false`);
  lines.push(`      mChangingConfigurations=false`);
  lines.push(`    ViewRoot:`);
  lines.push(`      mAdded=true mRemoved=false`);
  lines.push(`    View Hierarchy:`);
  let decor: ReturnType<typeof decorTree> | undefined;
  task.process.guard(() => (decor = decorTree(ctx, task)));
  if (decor) {
    lines.push(`      ${decor.decor}`);
    const views: string[] = [];
    printViews(ctx, decor.content, 4, `view/${task.taskId}/${top.className}`, views);
    lines.push(...views);
  }
  return lines.join("\n") + "\n";
}

function activityRecord(ctx: CommandContext, task: TaskRecord | undefined): string {
  const am = ctx.sys.activities;
  if (!task) {
    const c = { packageName: LAUNCHER_PACKAGE, className: LAUNCHER_ACTIVITY };
    return `ActivityRecord{${objectId(ctx, "launcher")} u0 ${shortComponent(c)} t1}`;
  }
  const top = am.topComponent(task);
  return `ActivityRecord{${objectId(ctx, `record/${task.taskId}/${top.className}`)} u0 ${shortComponent(top)} t${task.taskId}}`;
}

function dumpActivities(ctx: CommandContext): string {
  const am = ctx.sys.activities;
  const front = am.foregroundTask();
  const lines = ["ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)", "Display #0 (activities from top to bottom):"];
  const tasks = [...am.allTasks()];
  for (const t of tasks) {
    lines.push(`  Stack #${t.taskId}: type=standard mode=fullscreen`);
    lines.push(`    Task id #${t.taskId}`);
    lines.push(`    * TaskRecord{${objectId(ctx, `taskrecord/${t.taskId}`)} #${t.taskId} A=${t.process.packageName} U=0 StackId=${t.taskId} sz=1}`);
    lines.push(`      realActivity=${flatComponent(am.rootComponent(t))}`);
    lines.push(`        * Hist #0: ${activityRecord(ctx, t)}`);
  }
  lines.push("  Stack #0: type=home mode=fullscreen");
  lines.push("    Task id #1");
  lines.push(`        * Hist #0: ${activityRecord(ctx, undefined)}`);
  lines.push("");
  lines.push(`  mResumedActivity: ${activityRecord(ctx, front)}`);
  lines.push("");
  lines.push(` ResumedActivity: ${activityRecord(ctx, front)}`);
  lines.push(`  mLockTaskModeState=${am.lockedTaskId() === undefined ? "NONE" : "PINNED"}`);
  return lines.join("\n") + "\n";
}

/**
 * `dumpsys activity recents`, Android 10's RecentTasks dump: every app task, most recent first
 * (the home task is not a recent task), then the same as the visible recent tasks with ` id=<task id>`,
 * which AndroidWorld's close_recents reads back to `am stack remove` each.
 */
function dumpRecents(ctx: CommandContext): string {
  const am = ctx.sys.activities;
  const lines = [
    "ACTIVITY MANAGER RECENT TASKS (dumpsys activity recents)",
    "  mRecentsUid=10104",
    "  mRecentsComponent=ComponentInfo{com.android.launcher3/com.android.quickstep.RecentsActivity}",
    "  mFreezeTaskListReordering=false",
    "  mFreezeTaskListReorderingPendingTimeout=false",
  ];
  const tasks = [...am.allTasks()];
  if (tasks.length === 0) return lines.join("\n") + "\n";
  lines.push("", "  Recent tasks:");
  tasks.forEach((t, i) => {
    const root = shortComponent(am.rootComponent(t));
    lines.push(`  * Recent #${i}: TaskRecord{${objectId(ctx, `taskrecord/${t.taskId}`)} #${t.taskId} A=${t.process.packageName} U=0 StackId=${t.taskId} sz=1}`);
    lines.push(`    userId=0 effectiveUid=${t.process.pkg.uid} mCallingUid=shell mUserSetupComplete=true mCallingPackage=com.android.shell`);
    lines.push(`    affinity=${t.process.packageName}`);
    lines.push(`    intent={flg=0x10000000 cmp=${root}}`);
    lines.push(`    realActivity=${root}`);
  });
  lines.push("", "  Visible recent tasks (most recent first):");
  tasks.forEach((t, i) => {
    lines.push(`  * RecentTaskInfo #${i}:`);
    lines.push(`    id=${t.taskId} stackId=${t.taskId} userId=0 hasTask=true lastActiveTime=${t.taskId * 1000}`);
    lines.push(`    baseIntent=Intent { flg=0x10000000 cmp=${shortComponent(am.rootComponent(t))} }`);
    lines.push(`    topActivity=ComponentInfo{${flatComponent(am.topComponent(t))}}`);
  });
  return lines.join("\n") + "\n";
}

const SUBCOMMANDS = new Set(["activities", "a", "top", "processes", "p", "services", "s", "broadcasts", "b", "recents", "r", "intents", "i", "lastanr", "starter", "containers", "lru", "binder-proxies", "settings", "permissions"]);

export function dumpsysActivity(args: string[], ctx: CommandContext): number {
  const am = ctx.sys.activities;
  const first = args.find((a) => !a.startsWith("-"));
  if (first === undefined || first === "activities" || first === "a") {
    ctx.out(dumpActivities(ctx));
    return 0;
  }
  if (first === "top") {
    const front = am.foregroundTask();
    if (front) ctx.out(printTask(ctx, front, true));
    else ctx.out(`TASK ${LAUNCHER_PACKAGE} id=1 userId=0\n  ACTIVITY ${shortComponent({ packageName: LAUNCHER_PACKAGE, className: LAUNCHER_ACTIVITY })} ${objectId(ctx, "launcher")} pid=${LAUNCHER_PID}\n`);
    return 0;
  }
  if (first === "recents" || first === "r") {
    ctx.out(dumpRecents(ctx));
    return 0;
  }
  if (SUBCOMMANDS.has(first)) {
    ctx.out(`ACTIVITY MANAGER ${first.toUpperCase()} (dumpsys activity ${first})\n`);
    return 0;
  }
  // A package or component filter, as AppScreen checks send it: `dumpsys activity <pkg> <pkg>`.
  const pkg = first.includes("/") ? first.slice(0, first.indexOf("/")) : first;
  const front = am.foregroundTask();
  const tasks = am.allTasks().filter((t) => t.process.packageName === pkg);
  if (tasks.length === 0) {
    ctx.out(`Bad activity command, or no activities match: ${first}\nUse -h for help.\n`);
    return 0;
  }
  for (const t of tasks) ctx.out(printTask(ctx, t, t === front));
  return 0;
}
