/**
 * The one way a farm process reacts to SIGTERM / SIGINT: `main` gets an AbortSignal that aborts on the first
 * signal (it then drains and returns); a second signal means "now": by default the process exits at once
 * with the signal's usual status, as if we had not handled it.
 *
 *   await runUntilSignal(async (stop) => {
 *     const service = await start();
 *     await untilAborted(stop);
 *     await service.close();
 *   });
 */
export interface RunUntilSignalOptions {
  /** Default SIGTERM and SIGINT. */
  signals?: readonly NodeJS.Signals[];
  /** Told about the first signal (e.g. one log line "draining"). */
  onSignal?(signal: NodeJS.Signals): void;
  /** A further signal while draining. Default: exit at once with 128 + the signal's number. */
  onRepeat?(signal: NodeJS.Signals): void;
}

export async function runUntilSignal<T>(main: (stop: AbortSignal) => Promise<T>, opts: RunUntilSignalOptions = {}): Promise<T> {
  const signals = opts.signals ?? (["SIGTERM", "SIGINT"] as const);
  const ac = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (!ac.signal.aborted) {
      opts.onSignal?.(signal);
      ac.abort(signal);
    } else if (opts.onRepeat) opts.onRepeat(signal);
    else process.exit(128 + (signalNumber(signal) ?? 1));
  };
  for (const s of signals) process.on(s, onSignal);
  try {
    return await main(ac.signal);
  } finally {
    for (const s of signals) process.off(s, onSignal);
  }
}

/** Resolves once `signal` aborts (at once when it already has). */
export function untilAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}

function signalNumber(signal: NodeJS.Signals): number | undefined {
  return ({ SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGTERM: 15 } as Partial<Record<NodeJS.Signals, number>>)[signal];
}
