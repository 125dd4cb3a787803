/**
 * Campaign ids and episode job ids.
 *
 * An episode's job id is `<campaignId>-<episodeIndex>`. It is deterministic, so adding the same episode
 * twice (a re-submitted campaign, two scheduler processes, a retry after a crash) returns the existing
 * job instead of creating a second one. BullMQ 6.7 rejects custom ids that contain `:` (unless they have
 * exactly three parts, a legacy repeat-job form) and ids that are integers (`job.js` validateOptions),
 * hence `-` as the separator and no `:` in campaign ids. The index is the text after the last `-`, so
 * campaign ids may contain `-` themselves.
 */
import { QueueError } from "./errors.ts";

/** Letters, digits, `_`, `.`, `-`; starts with a letter or digit; at most 64 characters. */
export const CAMPAIGN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export function assertCampaignId(id: string): string {
  if (!CAMPAIGN_ID_PATTERN.test(id)) {
    throw new QueueError(
      "CAMPAIGN_ID_INVALID",
      `invalid campaign id '${id}': use 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit`,
    );
  }
  return id;
}

export function episodeJobId(campaignId: string, episodeIndex: number): string {
  assertCampaignId(campaignId);
  if (!Number.isSafeInteger(episodeIndex) || episodeIndex < 0) {
    throw new QueueError("JOB_ID_INVALID", `episode index must be a non-negative integer, got ${episodeIndex}`);
  }
  return `${campaignId}-${episodeIndex}`;
}

export interface EpisodeJobRef {
  campaignId: string;
  episodeIndex: number;
}

/** The campaign and index a job id names, or undefined when it is not an episode job id. */
export function parseEpisodeJobId(jobId: string | undefined): EpisodeJobRef | undefined {
  if (jobId === undefined) return undefined;
  const dash = jobId.lastIndexOf("-");
  if (dash <= 0) return undefined;
  const campaignId = jobId.slice(0, dash);
  const indexText = jobId.slice(dash + 1);
  if (!CAMPAIGN_ID_PATTERN.test(campaignId) || !/^(0|[1-9]\d{0,14})$/.test(indexText)) return undefined;
  return { campaignId, episodeIndex: Number(indexText) };
}
