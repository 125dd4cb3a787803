/**
 * The episode id: `<campaignId>-<episodeIndex>`, the same text as the episode's BullMQ job id in
 * @farm/queue (`episodeJobId`), so a record names its job and retries of one episode share the id:
 * equal ids mean duplicates.
 */
export function episodeIdOf(campaignId: string, episodeIndex: number): string {
  return `${campaignId}-${episodeIndex}`;
}
