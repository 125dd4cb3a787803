/**
 * Default BullMQ options of an episode job.
 *
 * Retries cover device trouble (a plain Error from the worker); bad task definitions fail at once with
 * `JobRejectedError`. Finished jobs are kept for a day (bounded in count too) because the scheduler
 * reconciles in-flight episodes by reading their job state; see services/scheduler.
 */
import type { Job, JobsOptions } from "bullmq";

export const DEFAULT_EPISODE_ATTEMPTS = 5;

export const defaultEpisodeJobOptions = {
  attempts: DEFAULT_EPISODE_ATTEMPTS,
  // 2 s, 4 s, 8 s, 16 s; jitter spreads retries of many devices failing together.
  backoff: { type: "exponential", delay: 2_000, jitter: 0.5 },
  removeOnComplete: { age: 24 * 3600, count: 50_000 },
  removeOnFail: { age: 7 * 24 * 3600, count: 50_000 },
} as const satisfies JobsOptions;

/** Campaign priorities: 0 (lowest) … 1000 (highest); 500 by default. */
export const CAMPAIGN_PRIORITY_MAX = 1000;
export const DEFAULT_CAMPAIGN_PRIORITY = 500;

/**
 * BullMQ's priority runs the other way (1 = first) and jobs without one jump ahead of all prioritized
 * jobs, so every episode job gets an explicit BullMQ priority: even numbers 2..2002 for new episodes.
 * The odd number just before (`retryBullPriority`) is a retry of the same campaign: it is taken before
 * every new episode of its campaign (and of equal-priority campaigns), never before a higher campaign.
 */
export function bullPriority(campaignPriority: number): number {
  const p = Math.min(CAMPAIGN_PRIORITY_MAX, Math.max(0, Math.trunc(campaignPriority)));
  return 2 * (CAMPAIGN_PRIORITY_MAX - p + 1);
}

/** The BullMQ priority a retried episode job gets (see bullPriority): one ahead of its campaign's new jobs. */
export function retryBullPriority(jobPriority: number | undefined): number {
  const p = Math.trunc(jobPriority ?? 0);
  if (p <= 1) return 1;
  return p % 2 === 0 ? p - 1 : p;
}

/**
 * Called by a worker on a job it is about to fail with a retryable error: gives the job its retry
 * priority, which BullMQ keeps through the backoff delay and re-queueing, so the retry is taken before
 * the new episodes of its campaign (the scheduler keeps a whole window of them queued). Best effort:
 * returns false when the priority could not be changed.
 */
export async function prioritizeRetry(job: Pick<Job, "opts" | "changePriority">): Promise<boolean> {
  const current = job.opts.priority;
  if (current === undefined || current === 0) return false;
  const priority = retryBullPriority(current);
  if (priority === current) return true;
  try {
    await job.changePriority({ priority });
    return true;
  } catch {
    return false;
  }
}
