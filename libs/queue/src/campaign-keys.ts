/**
 * Redis keys of campaign state, under the same hash-tagged prefix as the queues (so one Lua script may
 * touch them together on a cluster). `campaign` must never be used as a queue name: BullMQ's keys are
 * `<prefix>:<queue>:…` and would share this namespace.
 */
import { assertCampaignId } from "./ids.ts";

export interface CampaignKeys {
  /** HASH: spec (JSON), state, counters, summary. */
  record: string;
  /** SET of episode indexes enqueued but not yet counted as finished (≤ the window). */
  inflight: string;
  /** BITMAP: bit i = episode i was counted (SETBIT returns the old bit, so counting is idempotent). */
  done: string;
}

export function campaignKeys(prefix: string, campaignId: string): CampaignKeys {
  assertCampaignId(campaignId);
  const base = `${prefix}:campaign:${campaignId}`;
  return { record: base, inflight: `${base}:inflight`, done: `${base}:done` };
}

/** ZSET of every campaign id, scored by creation time (ms). */
export function campaignIndexKey(prefix: string): string {
  return `${prefix}:campaign-index`;
}

/** SET of campaigns not yet finished; the scheduler's top-up loop walks it. */
export function activeCampaignsKey(prefix: string): string {
  return `${prefix}:campaign-active`;
}
