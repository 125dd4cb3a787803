/** Deadlines for device calls: a late answer is data (`timedOut`), never an exception. */

export type Timed<T> = { timedOut: false; value: T } | { timedOut: true };

/**
 * Races `work` against `ms`. The work is not cancelled (adb calls cannot be), but its late result or
 * rejection is swallowed. A rejection inside the deadline is rethrown.
 */
export function withDeadline<T>(work: Promise<T>, ms: number): Promise<Timed<T>> {
  return new Promise<Timed<T>>((resolve, reject) => {
    let settled = false;
    const t = setTimeout(() => {
      if (settled) return;
      settled = true;
      resolve({ timedOut: true });
    }, Math.max(0, ms));
    work.then(
      (value) => {
        if (settled) return;
        settled = true;
        clearTimeout(t);
        resolve({ timedOut: false, value });
      },
      (err: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(t);
        reject(err);
      },
    );
  });
}

/** Milliseconds since `t0` (from performance.now()). */
export const since = (t0: number): number => performance.now() - t0;
