/**
 * `uiautomator dump [--compressed] [--windows] [FILE]` (AOSP's DumpCommand): the screen's view hierarchy
 * as XML (window-dump.ts) into FILE (default /sdcard/window_dump.xml; `/dev/tty` is the command's own
 * output), then `UI hierchary dumped to: <file>` (the real message, misspelling included).
 *
 * Like the real one it first waits for the screen to be idle: quiet for a while (1 s on a device), within
 * a global timeout (10 s). A screen that keeps changing (an app ticking in real time, or a tree that
 * differs between looks) prints `ERROR: could not get idle state.` on stderr. The quiet span is the
 * latency profile's `uiautomator` figure and the timeout ten times it; under `instant` both are zero, so
 * the dump is immediate and fails at once while an app ticks. Errors exit 0, as on a device.
 */
import { sleep } from "@farm/time";
import { displaySize } from "../../graphics/orientation.ts";
import type { AndroidSystem } from "../system/android-system.ts";
import { normalizePath } from "../system/file-system.ts";
import { fail, type CommandContext, type CommandTable } from "./types.ts";
import { untilAborted } from "../shell/io.ts";
import type { A11yEvent } from "../system/accessibility.ts";
import { dumpActiveWindow, dumpAllWindows, IllegalXmlCharacter } from "./window-dump.ts";

const DEFAULT_FILE = "/sdcard/window_dump.xml";
const TTY = "/dev/tty";
/** How often the screen is looked at while waiting for it to be quiet. */
const IDLE_POLL_MS = 20;

const USAGE = `Usage: uiautomator <subcommand> [options]

Available subcommands:

help: displays help message

dump: creates an XML dump of current UI hierarchy
    dump [--verbose][file]
      [--compressed]: dumps compressed layout information.
      [file]: the location where the dumped XML should be stored, default is
      ${DEFAULT_FILE}

events: prints out accessibility events until terminated
`;

/** Whether the screen is changing now: the app in front ticks, or the tree differs from `last`. */
function screenKey(sys: AndroidSystem): string | undefined {
  if (sys.activities.foregroundProcess()?.ticking) return undefined;
  return JSON.stringify(sys.accessibility.snapshot());
}

/** UiAutomation.waitForIdle(quiet, timeout): true once nothing changed for `quietMs`, false at the timeout. */
async function waitForIdle(sys: AndroidSystem, quietMs: number, timeoutMs: number, signal: AbortSignal): Promise<boolean> {
  // No quiet span to wait for (the instant profile): idle unless the app ticks; no need to look at the tree twice.
  if (quietMs <= 0 && timeoutMs <= 0) return !(sys.activities.foregroundProcess()?.ticking ?? false);
  const start = Date.now();
  let key = screenKey(sys);
  let quietSince = start;
  for (;;) {
    const now = Date.now();
    if (key !== undefined && now - quietSince >= quietMs) return true;
    if (now - start >= timeoutMs || signal.aborted) return false;
    await sleep(Math.min(IDLE_POLL_MS, Math.max(1, quietMs)), signal);
    const next = screenKey(sys);
    if (next === undefined || next !== key) quietSince = Date.now();
    key = next;
  }
}

function isWritable(path: string): boolean {
  return !(path === "/" || path.startsWith("/system/") || path.startsWith("/proc/") || (path.startsWith("/dev/") && path !== "/dev/null"));
}

async function dump(args: string[], ctx: CommandContext): Promise<number> {
  let file = DEFAULT_FILE;
  let compressed = false;
  let windows = false;
  // As DumpCommand: `--compressed` and `--windows` are flags, any other word not starting with `-` is the file.
  for (const a of args) {
    if (a === "--compressed") compressed = true;
    else if (a === "--windows") windows = true;
    else if (!a.startsWith("-")) file = a;
  }
  const path = normalizePath(file.startsWith("/") ? file : `/${file}`, false); // printed as named: /sdcard stays /sdcard
  const quietMs = ctx.sys.faults.latencyMs("uiautomator");
  if (!(await waitForIdle(ctx.sys, quietMs, quietMs * 10, ctx.signal))) {
    ctx.err("ERROR: could not get idle state.\n");
    return 0;
  }
  const screen = ctx.sys.accessibility.snapshot();
  const s = ctx.sys.screen;
  const opts = { compressed, display: displaySize(s.width, s.height, screen.rotation) };
  let xml: string;
  try {
    xml = windows ? dumpAllWindows(screen, opts) : dumpActiveWindow(screen, opts);
  } catch (e) {
    // KXmlSerializer's IllegalArgumentException is not caught by the tool: the process dies with it.
    if (e instanceof IllegalXmlCharacter) return fail(ctx, `java.lang.IllegalArgumentException: ${e.message}`, 1);
    throw e;
  }
  if (path === TTY) ctx.out(xml);
  else if (isWritable(path) && path !== "/dev/null" && !ctx.sys.fs.isDirectory(path)) ctx.sys.fs.write(path, new TextEncoder().encode(xml), 0o660, Math.floor(ctx.sys.now() / 1000));
  // A file that cannot be written is only logged by the real dumper; the message comes all the same.
  ctx.out(`UI hierchary dumped to: ${path}\n`);
  return 0;
}

const pad = (n: number, w = 2): string => String(n).padStart(w, "0");

/** AccessibilityEvent.toString() as Android prints it (the fields this device knows; the source's in brackets). */
export function accessibilityEventText(e: A11yEvent): string {
  const contentTypes = e.type === "TYPE_WINDOW_CONTENT_CHANGED" ? "[CONTENT_CHANGE_TYPE_SUBTREE]" : "[]";
  const desc = e.source?.contentDescription ? e.source.contentDescription : "null";
  const record = [
    `ClassName: ${e.className}`,
    `Text: [${e.text.join(", ")}]`,
    `ContentDescription: ${desc}`,
    `ItemCount: -1`,
    `CurrentItemIndex: -1`,
    `Enabled: ${e.source?.enabled ?? true}`,
    `Password: ${e.source?.password ?? false}`,
    `Checked: ${e.source?.checked ?? false}`,
    `FullScreen: false`,
    `Scrollable: ${e.source?.scrollable ?? false}`,
    `BeforeText: ${e.beforeText ?? "null"}`,
    `FromIndex: ${e.fromIndex ?? -1}`,
    `ToIndex: -1`,
    `ScrollX: -1`,
    `ScrollY: -1`,
    `MaxScrollX: -1`,
    `MaxScrollY: -1`,
    `ScrollDeltaX: ${e.scrollDeltaX ?? -1}`,
    `ScrollDeltaY: ${e.scrollDeltaY ?? -1}`,
    `AddedCount: ${e.addedCount ?? -1}`,
    `RemovedCount: ${e.removedCount ?? -1}`,
    `ParcelableData: null`,
  ].join("; ");
  return `EventType: ${e.type}; EventTime: ${e.eventTime}; PackageName: ${e.packageName}; MovementGranularity: 0; Action: 0; ContentChangeTypes: ${contentTypes}; WindowChangeTypes: [] [ ${record} ]; recordCount: 0`;
}

/**
 * `uiautomator events` (AOSP's EventsCommand): one line per AccessibilityEvent until the process is stopped,
 * `MM-dd HH:mm:ss.SSS <event.toString()>` (the device's clock).
 */
async function events(ctx: CommandContext): Promise<number> {
  const stop = ctx.sys.accessibility.onEvent((e) => {
    const d = new Date(ctx.sys.now());
    const stamp = `${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}`;
    ctx.out(`${stamp} ${accessibilityEventText(e)}\n`);
  });
  try {
    await untilAborted(ctx.signal);
  } finally {
    stop();
  }
  return 0;
}

export const uiautomatorCommands: CommandTable = {
  uiautomator: {
    latencyClass: "uiautomator",
    async run(args, ctx) {
      const sub = args[0];
      if (sub === "dump") return dump(args.slice(1), ctx);
      if (sub === "events") return events(ctx);
      if (sub === undefined || sub === "help") {
        ctx.out(USAGE);
        return 0;
      }
      return fail(ctx, `Unknown command: ${sub}\n${USAGE}`, 1);
    },
  },
};
