/**
 * The live stream of committed episodes (issue 38): one Redis Stream per campaign,
 *
 *   <prefix>:campaign:<id>:stream   STREAM  one entry per committed episode, in commit order
 *
 * The entry is added by the commit itself: the claim's Lua step (commit-claims.ts) runs XADD in the same atomic step
 * that sets the claim, so an episode is on the stream exactly when it is committed — a crash can come before both or
 * after both, never between them, and a retry that finds the claim adds nothing. Readers are Redis consumer groups
 * (XGROUP CREATE, XREADGROUP, XACK): each entry reaches each consumer group once; a consumer that restarts reads its
 * pending entries (delivered, never acknowledged) first, then new ones.
 *
 * Bounded: every XADD trims the stream to about `maxLen` entries (MAXLEN ~) and, with `maxAgeMs`, drops entries older
 * than that (XTRIM MINID ~). A consumer group that lags past the trim loses those entries: the lag metric says so first.
 */
import type { RedisClient as Redis } from "./connection.ts";
import { campaignKeys } from "./campaign-keys.ts";

/** Defaults of the stream's bounds (worker settings FARM_STREAM_MAXLEN, FARM_STREAM_MAX_AGE_SEC). */
export const DEFAULT_STREAM_MAXLEN = 100_000;
export const DEFAULT_STREAM_MAX_AGE_MS = 7 * 24 * 3600_000;

export interface StreamTrim {
  /** Keep about this many entries (MAXLEN ~); 0 = no length bound. */
  maxLen: number;
  /** Drop entries older than this (MINID ~ now − age); 0 = no age bound. */
  maxAgeMs: number;
}

export function episodeStreamKey(prefix: string, campaignId: string): string {
  return `${campaignKeys(prefix, campaignId).record}:stream`;
}

/** One committed episode as the stream carries it (field names are the entry's field names). */
export interface EpisodeStreamMessage {
  episodeId: string;
  campaignId: string;
  episodeIndex: number;
  /** Where the committed record is, as its host's storage names it, and that host. */
  file: string;
  host: string;
  outcome: string;
  cause: string;
  steps: number;
  reward: number;
  /** The task's score (0..1), when the episode was scored. */
  success?: number;
  groupIndex?: number;
  groupMember?: number;
  groupSize?: number;
  /** The commit's time (ms since epoch, the committing worker's clock). */
  committedAtMs: number;
}

/** The entry's field/value pairs (strings), in a fixed order. */
export function streamFields(m: EpisodeStreamMessage): string[] {
  const out = [
    "episodeId", m.episodeId,
    "campaignId", m.campaignId,
    "episodeIndex", String(m.episodeIndex),
    "file", m.file,
    "host", m.host,
    "outcome", m.outcome,
    "cause", m.cause,
    "steps", String(m.steps),
    "reward", String(m.reward),
    "committedAtMs", String(m.committedAtMs),
  ];
  if (m.success !== undefined) out.push("success", String(m.success));
  if (m.groupIndex !== undefined && m.groupMember !== undefined && m.groupSize !== undefined) {
    out.push("groupIndex", String(m.groupIndex), "groupMember", String(m.groupMember), "groupSize", String(m.groupSize));
  }
  return out;
}

/** An entry's fields back into a message; undefined when it is not one of ours. */
export function parseStreamFields(flat: readonly string[]): EpisodeStreamMessage | undefined {
  const f = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) f.set(flat[i]!, flat[i + 1]!);
  const num = (k: string): number | undefined => {
    const v = f.get(k);
    if (v === undefined || v === "") return undefined;
    const n = Number(v);
    return Number.isFinite(n) ? n : undefined;
  };
  const episodeId = f.get("episodeId");
  const campaignId = f.get("campaignId");
  const episodeIndex = num("episodeIndex");
  if (!episodeId || !campaignId || episodeIndex === undefined) return undefined;
  const m: EpisodeStreamMessage = {
    episodeId,
    campaignId,
    episodeIndex,
    file: f.get("file") ?? "",
    host: f.get("host") ?? "",
    outcome: f.get("outcome") ?? "",
    cause: f.get("cause") ?? "",
    steps: num("steps") ?? 0,
    reward: num("reward") ?? 0,
    committedAtMs: num("committedAtMs") ?? 0,
  };
  const success = num("success");
  if (success !== undefined) m.success = success;
  const gi = num("groupIndex");
  const gm = num("groupMember");
  const gs = num("groupSize");
  if (gi !== undefined && gm !== undefined && gs !== undefined) Object.assign(m, { groupIndex: gi, groupMember: gm, groupSize: gs });
  return m;
}

/** Consumer group and consumer names: what XGROUP/XREADGROUP take, bounded (they also label nothing: metrics use none). */
export const STREAM_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;

export interface StreamEntry {
  /** The stream entry id (`<ms>-<seq>`): the acknowledgement names it. */
  id: string;
  message: EpisodeStreamMessage | undefined;
}

/**
 * A consumer of one campaign's stream in one consumer group: `read()` returns this consumer's pending entries
 * (delivered before, never acknowledged: a restart resumes with them) until there are none, then new entries;
 * `ack()` acknowledges. The group is created at the stream's start on first use (every committed entry still kept).
 */
export class EpisodeStreamConsumer {
  private pendingDone = false;
  private pendingCursor = "0";
  private ready = false;

  constructor(
    private readonly redis: Redis,
    readonly key: string,
    readonly group: string,
    readonly consumer: string,
  ) {}

  static forCampaign(redis: Redis, prefix: string, campaignId: string, group: string, consumer: string): EpisodeStreamConsumer {
    return new EpisodeStreamConsumer(redis, episodeStreamKey(prefix, campaignId), group, consumer);
  }

  private async ensureGroup(): Promise<void> {
    if (this.ready) return;
    try {
      await this.redis.xgroup("CREATE", this.key, this.group, "0", "MKSTREAM");
    } catch (e) {
      if (!(e instanceof Error && e.message.startsWith("BUSYGROUP"))) throw e;
    }
    this.ready = true;
  }

  /**
   * Up to `count` entries: pending ones of this consumer first, then new ones (waiting up to `blockMs` for one when
   * there are none; 0 = do not wait). Give a `blockMs` only on a connection of its own (XREADGROUP BLOCK holds it).
   */
  async read(count: number, blockMs = 0): Promise<StreamEntry[]> {
    await this.ensureGroup();
    if (!this.pendingDone) {
      const got = await this.xread(this.pendingCursor, count, 0);
      if (got.length > 0) {
        this.pendingCursor = got[got.length - 1]!.id;
        return got;
      }
      this.pendingDone = true;
    }
    return this.xread(">", count, blockMs);
  }

  /** This consumer's pending entries (delivered, never acknowledged) after entry id `after` ("0": from the first). */
  async readPending(count: number, after = "0"): Promise<StreamEntry[]> {
    await this.ensureGroup();
    return this.xread(after, count, 0);
  }

  /** New entries only (never delivered to the group), waiting up to `blockMs` (0: not at all). */
  async readNew(count: number, blockMs = 0): Promise<StreamEntry[]> {
    await this.ensureGroup();
    return this.xread(">", count, blockMs);
  }

  private async xread(from: string, count: number, blockMs: number): Promise<StreamEntry[]> {
    const args: (string | number)[] = ["GROUP", this.group, this.consumer, "COUNT", count];
    if (blockMs > 0) args.push("BLOCK", blockMs);
    args.push("STREAMS", this.key, from);
    const reply = (await (this.redis as unknown as { call(...a: (string | number)[]): Promise<unknown> }).call("XREADGROUP", ...args)) as unknown[] | null;
    if (!reply || reply.length === 0) return [];
    // One stream: [[key, entries]] as Redis answers, or [key, entries] as some clients hand it on.
    const streams = (typeof reply[0] === "string" ? [reply] : reply) as [string, [string, string[] | null][]][];
    const out: StreamEntry[] = [];
    for (const [, entries] of streams) for (const [id, fields] of entries ?? []) out.push({ id, message: fields ? parseStreamFields(fields) : undefined });
    return out;
  }

  async ack(ids: readonly string[]): Promise<number> {
    if (ids.length === 0) return 0;
    return this.redis.xack(this.key, this.group, ...ids);
  }
}

/** One consumer group's standing on a stream (XINFO GROUPS): unacknowledged entries and entries not yet delivered. */
export interface StreamGroupInfo {
  name: string;
  pending: number;
  /** Entries added after the group's last delivered one (Redis ≥ 7's `lag`); null when Redis cannot say. */
  lag: number | null;
  lastDeliveredId: string;
}

export async function streamGroups(redis: Redis, key: string): Promise<StreamGroupInfo[]> {
  let reply: unknown[];
  try {
    reply = (await redis.xinfo("GROUPS", key)) as unknown[];
  } catch (e) {
    if (e instanceof Error && /no such key/i.test(e.message)) return [];
    throw e;
  }
  return reply.map((row) => {
    const flat = row as (string | number | null)[];
    const f = new Map<string, string | number | null>();
    for (let i = 0; i + 1 < flat.length; i += 2) f.set(String(flat[i]), flat[i + 1]!);
    const lag = f.get("lag");
    return {
      name: String(f.get("name") ?? ""),
      pending: Number(f.get("pending") ?? 0),
      lag: lag === null || lag === undefined ? null : Number(lag),
      lastDeliveredId: String(f.get("last-delivered-id") ?? ""),
    };
  });
}
