/**
 * @module @farm/lifecycle
 * One lifecycle pattern for every farm process: `runUntilSignal(main)` (SIGTERM/SIGINT → drain, a second
 * signal → exit now) and `Releasers`, one LIFO stack of release steps that collects failures instead of
 * stopping at the first.
 */
export { Releasers, type ReleaseFailure, type ReleaseOptions } from "./releasers.ts";
export { runUntilSignal, untilAborted, type RunUntilSignalOptions } from "./run-until-signal.ts";
