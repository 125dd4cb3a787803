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
export { type EpisodeLimitOverrides, type EffectiveEpisodeLimits, type ObservationBudgetSpec } from "./episode-limits.ts";
export { episodeConfigDefaults, type EpisodeConfig, type CompiledEpisodeConfig } from "./config.ts";
export { EpisodeError, TaskNotRunnableError, DeviceUnusableError, type EpisodeErrorCode } from "./errors.ts";
export { type EpisodeEvent, type EpisodeEventType, type EventHook, type StepPhasesMs } from "./events.ts";
export { type StepFacts, type EpisodeLimits, type Transition } from "./limits.ts";
export { type LogEvent } from "./log-parser.ts";
export { type PyValue, type PyParseResult } from "./py-literal.ts";
export { type ExtraCheck } from "./extras.ts";
export { type AppScreenCadence, type AppScreenVerdict } from "./app-screen-monitor.ts";
export { type StepsOutcome, type StepRunContext, type MessageWaiter } from "./step-interpreter.ts";
export { POLICY_USAGE_EXTRAS } from "./policy-usage.ts";
export { EpisodePolicyVersions, versionDistance, versionSpan, staleKindOf, staleness, MAX_TRACKED_VERSIONS, type StalenessOptions, type CampaignVersions, type StaleVerdict } from "./policy-versions.ts";
export { parseSettleSpec, formatSettleSpec, settleSpecProblem, SettleSpecError, SETTLE_KINDS, SETTLE_SPEC_MAX_CHARS, type SettleSpec, type SettleKind } from "./settle-spec.ts";
export { settleScreen, type SettleSignals, type SettleResult, type A11yEventClock } from "./settle.ts";
