/**
 * @module @farm/task-protocol
 * Outside task code (AndroidWorld's `TaskEval` classes behind `farm_client.task_server`) as an episode's
 * `TaskInstance`, over the task protocol (README.md): the farm opens every connection, carries out the task code's
 * device calls (AndroidEnv `AdbRequest`s) on the episode's device only, each bounded.
 *
 *   const inst = createRemoteTaskInstance(family.taskServer, { campaignId, index, seed }, { allowedHosts, taskDir, onEvent });
 *   const { goal, params } = await inst.initialize(deviceCalls, signal);   // rejects with a TaskProtocolError
 *   const score = await inst.score(deviceCalls, { answer, final: true }, signal);   // never rejects: score.error
 *   await inst.close();
 */
export { createRemoteTaskInstance, TASK_PROTOCOL_VERSION, type RemoteTaskOptions, type TaskProtocolEvent } from "./instance.ts";
export { TaskProtocolError, DeviceCallRefusedError, TaskCodeError, type TaskProtocolErrorCode } from "./errors.ts";
export type { Phase } from "./wire.ts";
export { createTaskProtocolCounters, type TaskProtocolCounters, type TaskProtocolCounts } from "./counters.ts";
