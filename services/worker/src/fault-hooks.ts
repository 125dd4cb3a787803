/**
 * Fault injection for the chaos bench and tests only: enabled by FARM_FAULT_INJECT (never by default),
 * e.g. `crash-after-claim` (the process SIGKILLs itself right after its first commit, before BullMQ
 * hears of it) or `crash-after-publish:3` (after the 3rd published file, before claiming it).
 */
export type FaultPoint = "crash-after-publish" | "crash-after-claim";

const POINTS: readonly FaultPoint[] = ["crash-after-publish", "crash-after-claim"];

export interface FaultHooks {
  /** Called at `point`; kills the process when a fault is armed there. */
  at(point: FaultPoint): void;
  readonly armed: string[];
}

/** Parses `point[:n],…`; throws on anything else so a typo never silently disables a fault. */
export function faultHooksFrom(spec: string | undefined, kill: () => void = () => process.kill(process.pid, "SIGKILL")): FaultHooks {
  const armed = new Map<FaultPoint, number>();
  for (const part of (spec ?? "").split(",").map((s) => s.trim()).filter(Boolean)) {
    const m = /^([a-z-]+)(?::(\d{1,6}))?$/.exec(part);
    if (!m || !(POINTS as readonly string[]).includes(m[1]!)) throw new RangeError(`FARM_FAULT_INJECT: '${part}' is not one of ${POINTS.join(", ")} (optionally :<n>)`);
    armed.set(m[1] as FaultPoint, Number(m[2] ?? 1));
  }
  const seen = new Map<FaultPoint, number>();
  return {
    armed: [...armed].map(([p, n]) => `${p}:${n}`),
    at(point) {
      const want = armed.get(point);
      if (want === undefined) return;
      const n = (seen.get(point) ?? 0) + 1;
      seen.set(point, n);
      if (n === want) {
        process.stderr.write(`${JSON.stringify({ event: "fault:inject", point, n })}\n`);
        kill();
      }
    },
  };
}
