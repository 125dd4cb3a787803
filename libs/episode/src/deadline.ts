/** Deadlines for device calls: a late answer is data (`timedOut`), never an exception. */
import { timed, type Timed } from "@farm/time";

export type { Timed };

/**
 * Races `work` against `ms`. The work is not cancelled (adb calls cannot be), but its late result or
 * rejection is swallowed. A rejection inside the deadline is rethrown.
 */
export function withDeadline<T>(work: Promise<T>, ms: number): Promise<Timed<T>> {
  return timed(work, ms);
}

/** Milliseconds since `t0` (from performance.now()). */
export const since = (t0: number): number => performance.now() - t0;
