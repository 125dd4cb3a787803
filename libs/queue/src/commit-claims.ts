/**
 * The farm-wide commit of an episode: a claim in Redis, set once per (campaign, index) and never changed.
 *
 * A worker writes and publishes the episode file on its own storage first, then claims the episode with
 * set-if-absent. The claim, not the file, is the commit: it names where the one committed record lives
 * (host + location), its checksum and the result the job returns. Any later attempt — on any host —
 * reads the claim first and completes from it; a file whose checksum the claim does not name is a
 * loser and is moved out of readers' sight (quarantined) by whoever finds it.
 *
 * The claim is made only while the claimer still holds the job's BullMQ lock, checked in the same Lua
 * step (a worker frozen past its lock, whose job another host now runs, cannot commit).
 *
 * Keys share the campaign's hash-tagged prefix (one Redis Cluster slot with the queue and campaign keys):
 *   <prefix>:campaign:<id>:claims        HASH index → claim JSON
 *   <prefix>:campaign:<id>:commit-stats  HASH committed, duplicatesPrevented, completedFromClaim,
 *                                              quarantined, retry:<cause>
 *
 * The interface (`CommitArbiter`) says nothing about files: the same arbiter serves object storage
 * (location = an object URL, checksum = its content hash).
 */
import type { RedisClient as Redis } from "./connection.ts";
import { LuaScript } from "./lua-script.ts";
import { z } from "zod";
import { campaignKeys } from "./campaign-keys.ts";
import { episodeJobResultSchema } from "./episode-job.ts";
import { QUEUE_NAMES } from "./names.ts";
import { DEFAULT_STREAM_MAX_AGE_MS, DEFAULT_STREAM_MAXLEN, episodeStreamKey, streamFields, type EpisodeStreamMessage, type StreamTrim } from "./episode-stream.ts";

export const episodeClaimSchema = z.object({
  /** Worker name of the host that committed (its storage holds the record). */
  host: z.string().max(256),
  /** Where the record is, as that host's storage names it (path or URL). */
  location: z.string().max(4096),
  /** Content hash of the committed file (`sha256:<hex>`); a file with another hash is not the commit. */
  checksum: z.string().max(200),
  bytes: z.int().min(0),
  attempt: z.int().min(0),
  /** When the claim was made (ms since epoch). */
  atMs: z.number(),
  /** The job result the commit answers with; a retry returns it without running the episode again. */
  result: episodeJobResultSchema,
});

export type EpisodeClaim = z.infer<typeof episodeClaimSchema>;

export interface EpisodeRef {
  campaignId: string;
  episodeIndex: number;
}

/** Who must still own the job for a claim to be accepted: its BullMQ lock key and token. */
export interface ClaimOwner {
  jobId: string;
  token: string;
}

export type ClaimOutcome =
  /** This claim is now the commit. */
  | { kind: "claimed"; claim: EpisodeClaim }
  /** The episode was committed already (by another attempt, or by this one before a lost reply). */
  | { kind: "taken"; claim: EpisodeClaim }
  /** The job's lock is no longer the caller's: nothing was claimed. */
  | { kind: "not-owner" };

/** Counters kept beside the claims of a campaign (`commit-stats`). */
export type CommitCounter = "duplicatesPrevented" | "completedFromClaim" | "quarantined" | `retry:${string}`;

export interface CommitStats {
  committed: number;
  duplicatesPrevented: number;
  completedFromClaim: number;
  quarantined: number;
  /** Retries by cause: a QueueErrorCode (DEVICE_TROUBLE, …), LOCK_LOST, or STALLED. */
  retriesByCause: Record<string, number>;
}

/** The farm-wide arbiter of commits. */
export interface CommitArbiter {
  lookup(ref: EpisodeRef): Promise<EpisodeClaim | undefined>;
  /**
   * Claims the episode unless it is claimed; with `owner`, only while the job's lock is still owner's. With `publish`,
   * the claim also adds the episode to its campaign's stream, in the same atomic step (episode-stream.ts).
   */
  claim(ref: EpisodeRef, claim: EpisodeClaim, owner?: ClaimOwner, publish?: EpisodeStreamMessage): Promise<ClaimOutcome>;
  count(campaignId: string, counter: CommitCounter, n?: number): Promise<void>;
  stats(campaignId: string): Promise<CommitStats>;
  /** Every claim of a campaign, by index. */
  claims(campaignId: string): Promise<Map<number, EpisodeClaim>>;
}

export function commitKeys(prefix: string, campaignId: string): { claims: string; stats: string } {
  const base = campaignKeys(prefix, campaignId).record;
  return { claims: `${base}:claims`, stats: `${base}:commit-stats` };
}

/** BullMQ's lock key of a job (`<prefix>:<queue>:<jobId>:lock`), holding the owning worker's token. */
export function jobLockKey(prefix: string, jobId: string, queue: string = QUEUE_NAMES.episodes): string {
  return `${prefix}:${queue}:${jobId}:lock`;
}

// KEYS: claims, stats, lock, stream. ARGV: index, claim JSON, token ('' = no owner check), stream maxLen (0 = none),
// stream max age ms (0 = none), publish ('1' = add the stream entry), the entry's field/value pairs.
// Returns {1, claim} claimed, {0, claim} taken, {-1, false} not the owner. The stream entry is added in the same step
// as the claim (episode-stream.ts): committed and published together, or neither.
const CLAIM = new LuaScript(`
local existing = redis.call('HGET', KEYS[1], ARGV[1])
if existing then return {0, existing} end
if ARGV[3] ~= '' and redis.call('GET', KEYS[3]) ~= ARGV[3] then return {-1, false} end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HINCRBY', KEYS[2], 'committed', 1)
if ARGV[6] == '1' then
  local maxLen = tonumber(ARGV[4])
  local args = {'XADD', KEYS[4]}
  if maxLen > 0 then table.insert(args, 'MAXLEN'); table.insert(args, '~'); table.insert(args, maxLen) end
  table.insert(args, '*')
  for i = 7, #ARGV do table.insert(args, ARGV[i]) end
  redis.call(unpack(args))
  local age = tonumber(ARGV[5])
  if age > 0 then
    local t = redis.call('TIME')
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    if now > age then redis.call('XTRIM', KEYS[4], 'MINID', '~', tostring(now - age)) end
  end
end
return {1, ARGV[2]}`);

function parseClaim(json: string): EpisodeClaim | undefined {
  try {
    const r = episodeClaimSchema.safeParse(JSON.parse(json));
    return r.success ? r.data : undefined;
  } catch {
    return undefined;
  }
}

export class RedisCommitArbiter implements CommitArbiter {
  private readonly trim: StreamTrim;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    trim: Partial<StreamTrim> = {},
  ) {
    this.trim = { maxLen: trim.maxLen ?? DEFAULT_STREAM_MAXLEN, maxAgeMs: trim.maxAgeMs ?? DEFAULT_STREAM_MAX_AGE_MS };
  }

  async lookup(ref: EpisodeRef): Promise<EpisodeClaim | undefined> {
    const json = await this.redis.hget(commitKeys(this.prefix, ref.campaignId).claims, String(ref.episodeIndex));
    return json === null ? undefined : parseClaim(json);
  }

  async claim(ref: EpisodeRef, claim: EpisodeClaim, owner?: ClaimOwner, publish?: EpisodeStreamMessage): Promise<ClaimOutcome> {
    const k = commitKeys(this.prefix, ref.campaignId);
    const lock = owner ? jobLockKey(this.prefix, owner.jobId) : k.claims;
    const stream = episodeStreamKey(this.prefix, ref.campaignId);
    const args = [String(ref.episodeIndex), JSON.stringify(claim), owner?.token ?? "", this.trim.maxLen, this.trim.maxAgeMs, publish ? "1" : "", ...(publish ? streamFields(publish) : [])];
    const [code, json] = (await CLAIM.run(this.redis, [k.claims, k.stats, lock, stream], args)) as [number, string | null];
    if (code === -1) return { kind: "not-owner" };
    const stored = json === null ? undefined : parseClaim(json);
    if (!stored) throw new Error(`claim of ${ref.campaignId}-${ref.episodeIndex} in Redis is not a valid claim`);
    return { kind: code === 1 ? "claimed" : "taken", claim: stored };
  }

  async count(campaignId: string, counter: CommitCounter, n = 1): Promise<void> {
    await this.redis.hincrby(commitKeys(this.prefix, campaignId).stats, counter, n);
  }

  async stats(campaignId: string): Promise<CommitStats> {
    return commitStatsOf(await this.redis.hgetall(commitKeys(this.prefix, campaignId).stats));
  }

  async claims(campaignId: string): Promise<Map<number, EpisodeClaim>> {
    const out = new Map<number, EpisodeClaim>();
    const key = commitKeys(this.prefix, campaignId).claims;
    let cursor = "0";
    do {
      const [next, flat] = await this.redis.hscan(key, cursor, "COUNT", 1000);
      cursor = next;
      for (let i = 0; i + 1 < flat.length; i += 2) {
        const c = parseClaim(flat[i + 1]!);
        if (c) out.set(Number(flat[i]), c);
      }
    } while (cursor !== "0");
    return out;
  }
}

/** The stats hash as read back (every field optional). */
export function commitStatsOf(h: Record<string, string>): CommitStats {
  const retriesByCause: Record<string, number> = {};
  for (const [k, v] of Object.entries(h)) if (k.startsWith("retry:")) retriesByCause[k.slice(6)] = Number(v);
  const n = (k: string) => Number(h[k] ?? 0);
  return { committed: n("committed"), duplicatesPrevented: n("duplicatesPrevented"), completedFromClaim: n("completedFromClaim"), quarantined: n("quarantined"), retriesByCause };
}
