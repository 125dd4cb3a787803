/**
 * The campaigns' current policy versions as a worker host reads them (issue 38): from Redis
 * (`@farm/queue` readPolicyVersions), kept for `ttlMs` (default 1 s) per campaign, so a host's devices ask Redis at
 * most once a second per campaign however many steps they take; a read that fails keeps the last value it had.
 * Bounded: at most MAX_CAMPAIGNS campaigns are kept (the oldest read goes first).
 */
import type { CampaignVersions } from "@farm/episode";
import { readPolicyVersions, type RedisClient } from "@farm/queue";

const MAX_CAMPAIGNS = 256;

interface Entry {
  at: number;
  value: CampaignVersions | undefined;
  pending?: Promise<CampaignVersions | undefined>;
}

export class CampaignVersionCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly ttlMs = 1000,
  ) {}

  /**
   * The campaign's versions, at most `ttlMs` old; while a refresh is in flight, the last value read (only the first
   * read of a campaign waits for Redis).
   */
  read(campaignId: string): Promise<CampaignVersions | undefined> {
    const now = performance.now();
    const e = this.entries.get(campaignId);
    if (e && now - e.at < this.ttlMs) return Promise.resolve(e.value);
    if (e?.pending) return e.at === -Infinity ? e.pending : Promise.resolve(e.value);
    const entry: Entry = e ?? { at: -Infinity, value: undefined };
    entry.pending = readPolicyVersions(this.redis, this.prefix, campaignId).then(
      (v) => {
        entry.value = v;
        entry.at = performance.now();
        return v;
      },
      () => entry.value,
    );
    void entry.pending.finally(() => {
      delete entry.pending;
    });
    if (!e) {
      if (this.entries.size >= MAX_CAMPAIGNS) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(campaignId, entry);
    }
    return entry.at === -Infinity ? entry.pending : Promise.resolve(entry.value);
  }
}
