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
