/**
 * @module @farm/episode
 * Runs setup, reset and the action loop of a task on one device, AndroidEnv's semantics without its failure modes.
 *
 *   const session = await DeviceSession.open({ device, task, config: { settleMs: 500 }, onEvent, logger });
 *   const traj = await session.runEpisode({ seed: 1, index: 0, policy, sink: (t) => writer.write(t) });
 *   // traj.outcome: "terminated" | "truncated"; traj.cause: EndCause; session.state: "ready" | "unusable" | …
 *   // per episode: runEpisode({ ..., limits: { maxEpisodeSteps: 50 }, deferRecovery: true }); then
 *   // if (session.state === "needs_recovery") await session.recover();
 *   await session.close();
 */
export type * from "./trajectory-types.ts";
export { DeviceSession, type DeviceSessionOptions, type SessionState } from "./device-session.ts";
export { DEVICE_TROUBLE, type RunEpisodeOptions } from "./runner.ts";
export { EpisodeRun } from "./episode-run.ts";
export type { SessionPort, EpisodeLog } from "./session-port.ts";
export { effectiveLimits, type EpisodeLimitOverrides, type EffectiveEpisodeLimits } from "./episode-limits.ts";
export { compileEpisodeConfig, episodeConfigDefaults, type EpisodeConfig, type CompiledEpisodeConfig } from "./config.ts";
export { EpisodeError, TaskNotRunnableError, DeviceUnusableError, type EpisodeErrorCode } from "./errors.ts";
export { safeEmit, type EpisodeEvent, type EpisodeEventType, type EventHook, type StepPhasesMs } from "./events.ts";
export { decideTransition, timeLimitSec, type StepFacts, type EpisodeLimits, type Transition } from "./limits.ts";
export { LogParser, type LogEvent } from "./log-parser.ts";
export { parsePyLiteral, parsePyFloat, type PyValue, type PyParseResult } from "./py-literal.ts";
export { checkExtra, shapeOf, ExtrasBuffer, extrasByName, type ExtraCheck } from "./extras.ts";
export { LOG_LIMITS, badExtraName, badExtraValue, badReward } from "./log-bounds.ts";
export { resultProblems, assertCommittable } from "./result-check.ts";
export { checkDue, AppScreenMonitor, type AppScreenCadence, type AppScreenVerdict } from "./app-screen-monitor.ts";
export { runSteps, assertRunnable, type StepsOutcome, type StepRunContext, type MessageWaiter } from "./step-interpreter.ts";
export { toPixel } from "./action.ts";
export { withGameConfigExtra, resetStepsWithGameConfig } from "./game-config.ts";
export { POLICY_USAGE_EXTRAS } from "./policy-usage.ts";
