/**
 * @module @farm/time
 * The farm's one `sleep`: waits `ms`, or less when `signal` aborts (it resolves then, never throws, so a
 * cancelled wait reads like a finished one and the caller checks `signal.aborted` itself).
 *
 *   await sleep(500, ac.signal);
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (!(ms > 0) || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

/**
 * Calls `check` every `intervalMs` until it returns a value other than `undefined` or `false`, and
 * resolves with that value; resolves `undefined` once `timeoutMs` has passed (or `signal` aborted)
 * without one. The caller names what it waited for in its own error: this library sits below the
 * error types. A `check` that throws ends the wait with that error, unless `onError` is given: then
 * the error goes to it and counts as "not yet" (a server still starting refuses before it answers).
 *
 *   const pid = await pollUntil(() => readPid(file), { timeoutMs: 5000, intervalMs: 25 });
 *   if (pid === undefined) throw new BootError("no pid file after 5 s");
 */
export async function pollUntil<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  opts: { timeoutMs: number; intervalMs: number; signal?: AbortSignal; onError?: (e: unknown) => void },
): Promise<T | undefined> {
  const deadline = Date.now() + opts.timeoutMs;
  const attempt = async (): Promise<T | undefined | false> => {
    if (!opts.onError) return check();
    try {
      return await check();
    } catch (e) {
      opts.onError(e);
      return undefined;
    }
  };
  for (;;) {
    const value = await attempt();
    if (value !== undefined && value !== false) return value;
    if (Date.now() >= deadline || opts.signal?.aborted) return undefined;
    await sleep(Math.min(opts.intervalMs, Math.max(1, deadline - Date.now())), opts.signal);
  }
}

/** A wait's answer when running out is data, not an error: the value, or that the time ran out. */
export type Timed<T> = { timedOut: false; value: T } | { timedOut: true };

const TIMED_OUT: Timed<never> = Object.freeze({ timedOut: true });
function inTime<T>(value: T): Timed<T> {
  return { timedOut: false, value };
}
function timedOut(): Timed<never> {
  return TIMED_OUT;
}

/**
 * `work`'s value as `{ timedOut: false, value }`, or `{ timedOut: true }` once `ms` pass first; a late value or
 * rejection of `work` is dropped, a rejection in time is passed on. The timer is cleared either way.
 *
 *   const r = await timed(device.sendAction(a), 2000);
 *   if (r.timedOut) return hung();
 */
export function timed<T>(work: PromiseLike<T>, ms: number): Promise<Timed<T>> {
  // Mapped inside the race, not by a `.then` on `work`: one promise per call, and it wraps every step's device work.
  return race(work, ms, inTime, timedOut);
}

/**
 * `work`, unless `ms` pass first: then rejects with `timeoutError()` (the caller's own error type; this
 * library sits below them). The timer is cleared either way; `work` itself is not cancelled.
 *
 *   await withDeadline(queue.waitUntilReady(), 5000, () => new SchedulerError("REDIS_UNAVAILABLE", "…"));
 */
export function withDeadline<T>(work: PromiseLike<T>, ms: number, timeoutError: () => Error): Promise<T> {
  return orTimeout(work, ms, () => {
    throw timeoutError();
  });
}

/**
 * `work`'s value, unless `ms` pass first: then what `onTimeout()` returns (or its error, when it throws); a
 * late value or rejection of `work` is dropped. For a wait whose running out is an answer, not an error
 * (`{ timedOut: true }`, a "timeout" step result). The timer is cleared either way; `work` is not cancelled.
 *
 *   const forest = await orTimeout(nextForest, 2000, () => failure("timeout"));
 */
export function orTimeout<T, U>(work: PromiseLike<T>, ms: number, onTimeout: () => U): Promise<T | U> {
  return race<T, T | U>(work, ms, same, onTimeout);
}

function same<T>(value: T): T {
  return value;
}

/**
 * The one timer race (`timed`, `orTimeout`): `onValue(value)` when `work` settles first, `onTimeout()` (or its
 * error) when `ms` pass first; a rejection in time is passed on, anything late is dropped. One promise, no
 * race/finally: it wraps every device call and policy act, thousands per second on a host.
 */
function race<T, R>(work: PromiseLike<T>, ms: number, onValue: (value: T) => R, onTimeout: () => R): Promise<R> {
  return new Promise<R>((resolve, reject) => {
    const timer = setTimeout(() => {
      try {
        resolve(onTimeout());
      } catch (e) {
        reject(e);
      }
    }, Math.max(0, ms));
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(onValue(value));
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}
