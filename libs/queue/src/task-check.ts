/**
 * How a worker turns a job into one of its own tasks. The job only names the task (id + content hash);
 * the definition — and so every command that will run on a device — comes from the worker's own task
 * folder. Unknown ids and hash mismatches are refused as unrecoverable: retrying cannot fix them.
 */
import { JobRejectedError, QueueError } from "./errors.ts";
import { jobIdForMessage, parseEpisodeJob, type EpisodeJobData } from "./episode-job.ts";

/** The identity part of `LoadedTask` (@farm/task) that matters here. */
export interface TaskIdentity {
  task: { id: string };
  hash: string;
}

/**
 * Validates the payload and finds its task, or throws `JobRejectedError` (an UnrecoverableError whose
 * message starts with `[JOB_PAYLOAD_INVALID]`, `[TASK_UNKNOWN]` or `[TASK_HASH_MISMATCH]`).
 *
 *   const { data, task } = resolveEpisodeJob(job.data, job.id, tasksById);
 */
export function resolveEpisodeJob<T extends TaskIdentity>(
  rawData: unknown,
  jobId: string | undefined,
  tasksById: ReadonlyMap<string, T>,
): { data: EpisodeJobData; task: T } {
  let data: EpisodeJobData;
  try {
    data = parseEpisodeJob(rawData, jobId);
  } catch (e) {
    if (e instanceof QueueError) throw JobRejectedError.from(e);
    throw e;
  }
  const shownId = jobIdForMessage(jobId);
  // A Map: a task id such as `constructor` never finds an Object.prototype member.
  const task = tasksById.get(data.taskId);
  if (!task) {
    throw new JobRejectedError("TASK_UNKNOWN", `job ${shownId}: task '${data.taskId}' is not in this worker's task folder`);
  }
  if (task.hash !== data.taskHash) {
    throw new JobRejectedError(
      "TASK_HASH_MISMATCH",
      `job ${shownId}: task '${data.taskId}' has hash ${task.hash.slice(0, 12)}… here but the job wants ${data.taskHash.slice(0, 12)}… (task files differ between scheduler and worker)`,
    );
  }
  return { data, task };
}
