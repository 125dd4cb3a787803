/** The episode id: campaign id + index. Retries of one episode share it, so equal ids mean duplicates. */
export function episodeIdOf(campaignId: string, episodeIndex: number): string {
  return `${campaignId}/${episodeIndex}`;
}
