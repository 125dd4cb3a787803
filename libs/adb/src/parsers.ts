/** Parsers for device command output (task-format.md §8.4), pure functions over the text a device prints. */
import { expandActivity } from "./validate.ts";

/** `pm list packages|features|libraries`: whitespace-split, keep items with the prefix, strip it. */
export function parsePmList(output: string, prefix: "package:" | "feature:" | "library:"): string[] {
  return output
    .split(/\s+/)
    .filter((w) => w.startsWith(prefix))
    .map((w) => w.slice(prefix.length));
}

/** Lines of `am stack list` that `grep -E visible=true` would keep. */
export function visibleLines(stackList: string): string[] {
  return stackList.split(/\r?\n/).filter((l) => /visible=true/.test(l));
}

/**
 * Current activity from `am stack list | grep -E visible=true` output: the text inside the last
 * `{…}` on the first line that has one (Python `re.search(r'.*\{(.*)\}')`). Undefined when none.
 */
export function parseCurrentActivity(visibleOutput: string): string | undefined {
  for (const line of visibleOutput.split(/\r?\n/)) {
    const m = /.*\{(.*)\}/.exec(line);
    if (m) return m[1];
  }
  return undefined;
}

/**
 * Fallback for devices without `am stack list` (Android 10+): the resumed activity from
 * `dumpsys activity activities` (`mResumedActivity: ActivityRecord{hex u0 pkg/.Act t12}` or
 * `topResumedActivity=ActivityRecord{…}`), expanded to `pkg/pkg.Act`.
 */
export function parseResumedActivity(dumpsysActivities: string): string | undefined {
  const m = /(?:mResumedActivity|topResumedActivity)[:=]\s*ActivityRecord\{\S+ \S+ ([^\s}]+)/.exec(dumpsysActivities);
  if (!m) return undefined;
  const full = m[1]!;
  return full.includes("/") ? expandActivity(full) : undefined;
}

/** `am stack list` is not there (newer Android) or failed. */
export function stackListUnavailable(output: string): boolean {
  return /Unknown command|Error: unknown|usage:|not found/i.test(output) && !/taskId=/.test(output);
}

const PIN_LINE = /^ *taskId=([0-9]*): ([^\s]*) .*visible=true.*topActivity=ComponentInfo\{([^\s]*)\}$/;

/** Task id to lock for `start_screen_pinning`: the first task whose base or top activity equals `fullActivity`. */
export function findPinnableTask(stackList: string, fullActivity: string): string | undefined {
  for (const raw of stackList.split("\n")) {
    const line = raw.replace(/\r$/, "");
    const m = PIN_LINE.exec(line);
    if (!m) continue;
    if (m[2] === fullActivity || m[3] === fullActivity) return m[1];
  }
  return undefined;
}

/**
 * Orientation from `dumpsys input`: a negative `PhysicalWidth` marks an invalid input device whose
 * next orientation line is skipped; the first other `SurfaceOrientation`/`InputDeviceOrientation`
 * line gives the digit (0..3).
 */
export function parseOrientation(dumpsysInput: string): 0 | 1 | 2 | 3 | undefined {
  let skipNext = false;
  for (const line of dumpsysInput.split(/\r?\n/)) {
    const w = /\s+PhysicalWidth:\s+(-?\d+)px/.exec(line);
    if (w && Number(w[1]) < 0) {
      skipNext = true;
      continue;
    }
    const o = /\s+(SurfaceOrientation|InputDeviceOrientation):\s+.*(\d)/.exec(line);
    if (o) {
      if (skipNext) {
        skipNext = false;
        continue;
      }
      const d = Number(o[2]);
      if (d >= 0 && d <= 3) return d as 0 | 1 | 2 | 3;
    }
  }
  return undefined;
}

/** `wm size`: the override size if present, else the physical size. */
export function parseWmSize(output: string): { width: number; height: number } | undefined {
  const over = /Override size:\s*(\d+)x(\d+)/.exec(output);
  const phys = /Physical size:\s*(\d+)x(\d+)/.exec(output);
  const m = over ?? phys;
  return m ? { width: Number(m[1]), height: Number(m[2]) } : undefined;
}

/** `am start` output reports a failure anywhere as `Error` (upstream: substring test). */
export function amStartFailed(output: string): boolean {
  return output.includes("Error");
}

/** `pm install` prints `Success` on success, else `Failure [CODE…]`. */
export function parsePmInstall(output: string): { ok: true } | { ok: false; reason: string } {
  if (/^Success\s*$/m.test(output)) return { ok: true };
  const m = /Failure \[([^\]]*)\]/.exec(output);
  return { ok: false, reason: m ? m[1]! : output.trim() || "no output from pm install" };
}

/** Output of a device command that itself says it failed (`Error: …`, `Exception`, `Failure`, `Unknown command`). */
export function looksLikeDeviceError(output: string): boolean {
  return /(^|\n)\s*(Error|Exception|Failure|Unknown command|\/system\/bin\/sh: )|java\.lang\.\w+Exception|: not found\b|inaccessible or not found/.test(output);
}
