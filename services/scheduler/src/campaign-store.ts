/**
 * Campaign state in Redis (keys from @farm/queue `campaignKeys`, under the queue's hash tag):
 *
 *   <prefix>:campaign:<id>            HASH  spec, state, episodes, nextIndex, completed, failed, rewardSum,
 *                                           stepsSum, outcome:<o>, cause:<c>, failure:<code>, *AtMs, summary
 *   <prefix>:campaign:<id>:inflight   SET   indexes enqueued and not yet counted (bounded by the window)
 *   <prefix>:campaign:<id>:done       BITMAP bit i set once episode i is counted
 *   <prefix>:campaign-index           ZSET  every campaign id by creation time
 *   <prefix>:campaign-active          SET   campaigns not yet finished
 *
 * Every state change is one Lua script, so several scheduler processes can share a Redis: claiming
 * indexes to enqueue is atomic (no index is claimed twice), counting a finished episode is idempotent
 * (SETBIT returns the old bit), and finishing happens once (guarded by `finishedAtMs`).
 */
import { LuaScript, type RedisClient as Redis } from "@farm/queue";
import { activeCampaignsKey, campaignIndexKey, campaignKeys, commitKeys, commitStatsOf, episodeStreamKey, policyVersionsKey, type CommitStats } from "@farm/queue";
import type { CampaignSpec } from "./campaign-spec.ts";

export type CampaignState = "running" | "completed" | "cancelled" | "failed";

/** The record as read back, counters parsed. */
export interface CampaignRecord {
  spec: CampaignSpec;
  state: CampaignState;
  /** Episodes to run: the spec's, plus K for each uniform group re-sampled. */
  episodes: number;
  /** Grouped campaigns: whole groups (every member committed), of them all-equal rewards, re-sampled, with a failed member; sums of group means and stds. */
  groupsCompleted: number;
  groupsUniform: number;
  groupsResampled: number;
  groupsFailed: number;
  groupMeanSum: number;
  groupStdSum: number;
  nextIndex: number;
  completed: number;
  failed: number;
  rewardSum: number;
  stepsSum: number;
  createdAtMs: number;
  cancelledAtMs?: number;
  lastFinishedAtMs?: number;
  finishedAtMs?: number;
  byOutcome: Record<string, number>;
  byCause: Record<string, number>;
  failuresByCode: Record<string, number>;
  summary?: unknown;
}

/** How one episode ended, as counted. */
export type EpisodeTally =
  | { kind: "completed"; outcome: string; cause: string; reward: number; steps: number }
  | { kind: "failed"; code: string };

const CREATE = new LuaScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('HGET', KEYS[1], 'spec') end
redis.call('HSET', KEYS[1], 'spec', ARGV[2], 'state', 'running', 'episodes', ARGV[3], 'nextIndex', 0,
  'completed', 0, 'failed', 0, 'rewardSum', 0, 'stepsSum', 0, 'createdAtMs', ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
redis.call('SADD', KEYS[3], ARGV[1])
return false`);

// Claims up to (window - inflight) next indexes of a running campaign: returns {start, count}.
const CLAIM = new LuaScript(`
if redis.call('HGET', KEYS[1], 'state') ~= 'running' then return {0, 0} end
local nextIndex = tonumber(redis.call('HGET', KEYS[1], 'nextIndex'))
local total = tonumber(redis.call('HGET', KEYS[1], 'episodes'))
local room = tonumber(ARGV[1]) - redis.call('SCARD', KEYS[2])
local n = math.min(room, total - nextIndex, tonumber(ARGV[2]))
if n <= 0 then return {nextIndex, 0} end
for i = nextIndex, nextIndex + n - 1 do redis.call('SADD', KEYS[2], i) end
redis.call('HSET', KEYS[1], 'nextIndex', nextIndex + n)
return {nextIndex, n}`);

// Counts one finished episode once: {1, g} = counted now, {0, 0} = already counted, {-1, 0} = no such campaign/index.
// With groups (ARGV[8] = K > 0) it also keeps the group's rewards (KEYS[4], fields g<i>:n|sum|sumsq|min|max|failed,
// removed once the group is complete) and, when the K-th member is counted, the campaign's group statistics;
// g = 1 complete, 2 complete and uniform (all rewards equal), 3 uniform and a new instance added (episodes += K, at most
// ARGV[9] times), 4 complete with a failed member (not a whole group: no statistics, no resample), 0 not complete.
const RECORD = new LuaScript(`
local total = tonumber(redis.call('HGET', KEYS[1], 'episodes'))
local idx = tonumber(ARGV[1])
if not total or idx >= total then return {-1, 0} end
if redis.call('SETBIT', KEYS[3], idx, 1) == 1 then return {0, 0} end
redis.call('SREM', KEYS[2], ARGV[1])
if ARGV[2] == 'completed' then
  redis.call('HINCRBY', KEYS[1], 'completed', 1)
  redis.call('HINCRBY', KEYS[1], 'outcome:' .. ARGV[3], 1)
  redis.call('HINCRBY', KEYS[1], 'cause:' .. ARGV[4], 1)
  redis.call('HINCRBYFLOAT', KEYS[1], 'rewardSum', ARGV[5])
  redis.call('HINCRBY', KEYS[1], 'stepsSum', ARGV[6])
else
  redis.call('HINCRBY', KEYS[1], 'failed', 1)
  redis.call('HINCRBY', KEYS[1], 'failure:' .. ARGV[4], 1)
end
redis.call('HSET', KEYS[1], 'lastFinishedAtMs', ARGV[7])
local K = tonumber(ARGV[8])
if K <= 0 then return {1, 0} end
local pre = 'g' .. tostring(math.floor(idx / K)) .. ':'
if ARGV[2] == 'completed' then
  local r = tonumber(ARGV[5])
  redis.call('HINCRBYFLOAT', KEYS[4], pre .. 'sum', ARGV[5])
  redis.call('HINCRBYFLOAT', KEYS[4], pre .. 'sumsq', string.format('%.17g', r * r))
  local mn = redis.call('HGET', KEYS[4], pre .. 'min')
  if not mn or r < tonumber(mn) then redis.call('HSET', KEYS[4], pre .. 'min', ARGV[5]) end
  local mx = redis.call('HGET', KEYS[4], pre .. 'max')
  if not mx or r > tonumber(mx) then redis.call('HSET', KEYS[4], pre .. 'max', ARGV[5]) end
else
  redis.call('HINCRBY', KEYS[4], pre .. 'failed', 1)
end
local n = redis.call('HINCRBY', KEYS[4], pre .. 'n', 1)
if n < K then return {1, 0} end
local v = redis.call('HMGET', KEYS[4], pre .. 'sum', pre .. 'sumsq', pre .. 'min', pre .. 'max', pre .. 'failed')
redis.call('HDEL', KEYS[4], pre .. 'n', pre .. 'sum', pre .. 'sumsq', pre .. 'min', pre .. 'max', pre .. 'failed')
if v[5] then
  redis.call('HINCRBY', KEYS[1], 'groupsFailed', 1)
  return {1, 4}
end
local mean = tonumber(v[1]) / K
local var = tonumber(v[2]) / K - mean * mean
if var < 0 then var = 0 end
redis.call('HINCRBY', KEYS[1], 'groupsCompleted', 1)
redis.call('HINCRBYFLOAT', KEYS[1], 'groupMeanSum', string.format('%.17g', mean))
redis.call('HINCRBYFLOAT', KEYS[1], 'groupStdSum', string.format('%.17g', math.sqrt(var)))
if v[3] ~= v[4] and tonumber(v[3]) ~= tonumber(v[4]) then return {1, 1} end
redis.call('HINCRBY', KEYS[1], 'groupsUniform', 1)
local done = tonumber(redis.call('HGET', KEYS[1], 'groupsResampled') or '0')
if done >= tonumber(ARGV[9]) or redis.call('HGET', KEYS[1], 'state') ~= 'running' then return {1, 2} end
redis.call('HINCRBY', KEYS[1], 'groupsResampled', 1)
redis.call('HINCRBY', KEYS[1], 'episodes', K)
return {1, 3}`);

/** What counting an episode did to its group (grouped campaigns): see RECORD. */
export type GroupEvent = "none" | "complete" | "uniform" | "resampled" | "failed";
const GROUP_EVENTS: readonly GroupEvent[] = ["none", "complete", "uniform", "resampled", "failed"];

// running → cancelled; returns the state found.
const CANCEL = new LuaScript(`
local state = redis.call('HGET', KEYS[1], 'state')
if state == 'running' then redis.call('HSET', KEYS[1], 'state', 'cancelled', 'cancelledAtMs', ARGV[1]) end
return state`);

// Finishes once, only from the expected state: 1 = this caller finished it.
const FINISH = new LuaScript(`
if redis.call('HEXISTS', KEYS[1], 'finishedAtMs') == 1 then return 0 end
if redis.call('HGET', KEYS[1], 'state') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'finishedAtMs', ARGV[3], 'summary', ARGV[4])
redis.call('SREM', KEYS[2], ARGV[5])
return 1`);

function num(v: string | undefined): number | undefined {
  return v === undefined ? undefined : Number(v);
}

function parseRecord(h: Record<string, string>): CampaignRecord | undefined {
  if (h.spec === undefined) return undefined;
  const pick = (prefix: string): Record<string, number> => {
    const out: Record<string, number> = {};
    for (const [k, v] of Object.entries(h)) if (k.startsWith(prefix)) out[k.slice(prefix.length)] = Number(v);
    return out;
  };
  const rec: CampaignRecord = {
    spec: JSON.parse(h.spec) as CampaignSpec,
    state: h.state as CampaignState,
    episodes: 0,
    groupsCompleted: Number(h.groupsCompleted ?? 0),
    groupsUniform: Number(h.groupsUniform ?? 0),
    groupsResampled: Number(h.groupsResampled ?? 0),
    groupsFailed: Number(h.groupsFailed ?? 0),
    groupMeanSum: Number(h.groupMeanSum ?? 0),
    groupStdSum: Number(h.groupStdSum ?? 0),
    nextIndex: Number(h.nextIndex ?? 0),
    completed: Number(h.completed ?? 0),
    failed: Number(h.failed ?? 0),
    rewardSum: Number(h.rewardSum ?? 0),
    stepsSum: Number(h.stepsSum ?? 0),
    createdAtMs: Number(h.createdAtMs ?? 0),
    byOutcome: pick("outcome:"),
    byCause: pick("cause:"),
    failuresByCode: pick("failure:"),
  };
  rec.episodes = Number(h.episodes ?? rec.spec.episodes);
  const optional = { cancelledAtMs: num(h.cancelledAtMs), lastFinishedAtMs: num(h.lastFinishedAtMs), finishedAtMs: num(h.finishedAtMs) };
  for (const [k, v] of Object.entries(optional)) if (v !== undefined) (rec as unknown as Record<string, number>)[k] = v;
  if (h.summary !== undefined) rec.summary = JSON.parse(h.summary);
  return rec;
}

export class CampaignStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  keys(id: string) {
    return campaignKeys(this.prefix, id);
  }

  /** Creates the record unless it exists; returns the existing spec when it does. */
  async create(spec: CampaignSpec, nowMs: number): Promise<{ created: true } | { created: false; existing: CampaignSpec }> {
    const k = this.keys(spec.id);
    const existing = (await CREATE.run(this.redis, [k.record, campaignIndexKey(this.prefix), activeCampaignsKey(this.prefix)], [spec.id, JSON.stringify(spec), spec.episodes, nowMs])) as string | null;
    return existing === null ? { created: true } : { created: false, existing: JSON.parse(existing) as CampaignSpec };
  }

  async get(id: string): Promise<CampaignRecord | undefined> {
    return parseRecord(await this.redis.hgetall(this.keys(id).record));
  }

  /** Newest first. */
  async listIds(limit: number): Promise<string[]> {
    return this.redis.zrevrange(campaignIndexKey(this.prefix), 0, limit - 1);
  }

  async activeIds(): Promise<string[]> {
    return this.redis.smembers(activeCampaignsKey(this.prefix));
  }

  async forgetActive(id: string): Promise<void> {
    await this.redis.srem(activeCampaignsKey(this.prefix), id);
  }

  /** Claims the next indexes to enqueue, keeping at most `window` in flight; `max` bounds one batch. */
  async claim(id: string, window: number, max: number): Promise<{ start: number; count: number }> {
    const k = this.keys(id);
    const [start, count] = (await CLAIM.run(this.redis, [k.record, k.inflight], [window, max])) as [number, number];
    return { start, count };
  }

  async inflight(id: string): Promise<number[]> {
    return (await this.redis.smembers(this.keys(id).inflight)).map(Number);
  }

  async inflightCount(id: string): Promise<number> {
    return this.redis.scard(this.keys(id).inflight);
  }

  /** Forgets an in-flight index without counting it (its job was removed by a cancel). */
  async dropInflight(id: string, index: number): Promise<void> {
    await this.redis.srem(this.keys(id).inflight, String(index));
  }

  async isDone(id: string, index: number): Promise<boolean> {
    return (await this.redis.getbit(this.keys(id).done, index)) === 1;
  }

  /** Counts a finished episode; true only the first time for this (campaign, index). */
  async record(id: string, index: number, tally: EpisodeTally, nowMs: number, grouping: Pick<CampaignSpec, "groupSize" | "resampleUniformGroups"> = {}): Promise<boolean> {
    return (await this.recordWithGroup(id, index, tally, nowMs, grouping)).counted;
  }

  /** As `record`, also saying what the episode did to its group (grouped campaigns). */
  async recordWithGroup(id: string, index: number, tally: EpisodeTally, nowMs: number, grouping: Pick<CampaignSpec, "groupSize" | "resampleUniformGroups"> = {}): Promise<{ counted: boolean; group: GroupEvent }> {
    const k = this.keys(id);
    const args =
      tally.kind === "completed"
        ? ["completed", tally.outcome, tally.cause, String(tally.reward), tally.steps]
        : ["failed", "", tally.code, 0, 0];
    const [r, g] = (await RECORD.run(this.redis, [k.record, k.inflight, k.done, `${k.record}:groups`], [index, ...args, nowMs, grouping.groupSize ?? 0, grouping.resampleUniformGroups ?? 0])) as [number, number];
    return { counted: r === 1, group: GROUP_EVENTS[g] ?? "none" };
  }

  /** The campaign's farm-wide commit accounting (claims made, duplicates prevented, quarantined, retries). */
  async commitStats(id: string): Promise<CommitStats> {
    return commitStatsOf(await this.redis.hgetall(commitKeys(this.prefix, id).stats));
  }

  /**
   * Once a campaign is finished its claims are only needed for re-submissions and `reconcile`: they expire
   * after `ttlSec` so Redis does not grow with every campaign ever run.
   */
  async expireCommits(id: string, ttlSec: number): Promise<void> {
    const k = commitKeys(this.prefix, id);
    // The campaign's policy versions and its stream (issue 38) go with them: nothing reads them once no episode runs.
    await this.redis
      .multi()
      .expire(k.claims, ttlSec)
      .expire(k.stats, ttlSec)
      .expire(policyVersionsKey(this.prefix, id), ttlSec)
      .expire(episodeStreamKey(this.prefix, id), ttlSec)
      .del(`${this.keys(id).record}:groups`)
      .exec();
  }

  async countRetry(id: string, cause: string): Promise<void> {
    await this.redis.hincrby(commitKeys(this.prefix, id).stats, `retry:${cause}`, 1);
  }

  /** running → cancelled. Returns the state the campaign was in (undefined = no such campaign). */
  async cancel(id: string, nowMs: number): Promise<CampaignState | undefined> {
    const r = (await CANCEL.run(this.redis, [this.keys(id).record], [nowMs])) as string | null;
    return (r ?? undefined) as CampaignState | undefined;
  }

  /** Moves `from` → `to` with the summary, once; true when this call did it. */
  async finish(id: string, from: CampaignState, to: CampaignState, summary: unknown, nowMs: number): Promise<boolean> {
    const r = (await FINISH.run(this.redis, [this.keys(id).record, activeCampaignsKey(this.prefix)], [from, to, nowMs, JSON.stringify(summary), id])) as number;
    return r === 1;
  }
}
