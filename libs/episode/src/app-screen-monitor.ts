/**
 * The expected-app-screen check (task-format.md §7.8) at a configurable cadence: every K steps and/or every
 * T ms, counted from the reset. The runner starts the check right after a step's action, runs it alongside
 * that step's observation and log collection, and applies the verdict to that same step (upstream reports it
 * 150 steps late). Verdict: SUCCESS / EMPTY → stayed; UNEXPECTED_ACTIVITY / UNEXPECTED_VIEW_HIERARCHY → left;
 * FAILED_ACTIVITY_EXTRACTION → stayed until `maxFailedCurrentActivity` in a row, then left.
 */
import type { AppScreenMatch, Device } from "@farm/adb";
import type { AppScreen } from "@farm/task";

export interface AppScreenCadence {
  everySteps: number;
  everyMs: number;
}

export interface AppScreenVerdict {
  match: AppScreenMatch;
  left: boolean;
}

/** Pure cadence decision: is a check due at this step? */
export function checkDue(step: number, nowMs: number, lastCheckMs: number, c: AppScreenCadence): boolean {
  if (c.everySteps > 0 && step > 0 && step % c.everySteps === 0) return true;
  return c.everyMs > 0 && nowMs - lastCheckMs >= c.everyMs;
}

export class AppScreenMonitor {
  private lastCheckMs = 0;
  private failedInARow = 0;

  constructor(
    readonly screen: AppScreen | undefined,
    private readonly cadence: AppScreenCadence,
    private readonly maxFailedCurrentActivity: number,
  ) {}

  /** Restart the count at the episode start. */
  resetEpisode(nowMs: number): void {
    this.lastCheckMs = nowMs;
  }

  due(step: number, nowMs: number): boolean {
    return this.screen !== undefined && checkDue(step, nowMs, this.lastCheckMs, this.cadence);
  }

  /** Turns one match result into a verdict (stateful for FAILED_ACTIVITY_EXTRACTION). */
  verdictOf(match: AppScreenMatch): AppScreenVerdict {
    if (match === "UNEXPECTED_ACTIVITY" || match === "UNEXPECTED_VIEW_HIERARCHY") {
      this.failedInARow = 0;
      return { match, left: true };
    }
    if (match === "FAILED_ACTIVITY_EXTRACTION") {
      this.failedInARow++;
      if (this.failedInARow >= this.maxFailedCurrentActivity) {
        this.failedInARow = 0;
        return { match, left: true };
      }
      return { match, left: false };
    }
    this.failedInARow = 0;
    return { match, left: false };
  }

  async check(device: Device, nowMs: number, timeoutMs: number): Promise<AppScreenVerdict> {
    this.lastCheckMs = nowMs;
    if (!this.screen) return { match: "SUCCESS", left: false };
    let match: AppScreenMatch;
    try {
      match = await device.matchAppScreen(this.screen, { timeoutMs });
    } catch {
      match = "FAILED_ACTIVITY_EXTRACTION";
    }
    return this.verdictOf(match);
  }
}
