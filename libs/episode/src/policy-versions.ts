/**
 * Policy versions of an episode (issue 38): the version each step's answer reported, the episode's first and last,
 * and staleness against a campaign's `maxVersions` (`--max-staleness V`).
 *
 * Versions are strings. Two versions are compared as integers when both are whole numbers written plainly (`"12"`,
 * `"-3"`; not `"012"` or `"1e3"`); else by
 * their places in the campaign's version order (the versions raised through the API, oldest first); a pair that is
 * neither is not comparable and counts for nothing. An episode is stale when its steps' versions span more than V
 * (the largest distance between two of them) or when the campaign's current version is more than V past the oldest
 * of them (lag). Once stale it stays stale (the first reason found is kept); `onStale: "end"` ends it (truncated,
 * `stale_policy`), `"mark"` only records the reason.
 */
import { withDeadline } from "./deadline.ts";

/** The campaign's versions as raised through the scheduler's API: the current one and the order (oldest first). */
export interface CampaignVersions {
  current: string;
  order: readonly string[];
}

export interface StalenessOptions {
  /** V: the most versions an episode's steps may span, or lag the campaign's current version by (>= 0). */
  maxVersions: number;
  /** What a stale episode gets: its `stale` reason only (default), or also an end (truncated, `stale_policy`). */
  onStale?: "mark" | "end";
  /** The campaign's current version and order (read from a short-lived cache); undefined when none was raised. */
  campaignVersions?: () => Promise<CampaignVersions | undefined>;
}

/** What made an episode stale. */
export interface StaleVerdict {
  kind: "span" | "lag";
  /** The span or the lag, in versions. */
  distance: number;
  reason: string;
}

/** The longest a staleness check waits for the campaign's versions. */
export const CAMPAIGN_READ_MS = 500;

/** Distinct versions an episode keeps for comparisons (a version changes a few times per episode at most). */
export const MAX_TRACKED_VERSIONS = 256;

/** A version that is a whole number written as such (`"12"`, `"-3"`; not `"012"`, `"1e3"`, `"+4"`): its value. */
function asInteger(v: string): number | undefined {
  const n = Number(v);
  return Number.isSafeInteger(n) && String(n) === v ? n : undefined;
}

/** How many versions `to` is past `from` (negative: before it); undefined when the two cannot be compared. */
export function versionDistance(from: string, to: string, order: readonly string[] = []): number | undefined {
  const a = asInteger(from);
  const b = asInteger(to);
  if (a !== undefined && b !== undefined) return b - a;
  const i = order.lastIndexOf(from);
  const j = order.lastIndexOf(to);
  return i >= 0 && j >= 0 ? j - i : undefined;
}

/**
 * Whether versions `seen` are stale against V and the campaign's versions: the span first (the widest comparable
 * pair), then the lag of the oldest comparable version behind the campaign's current one.
 */
export function staleness(seen: Iterable<string>, maxVersions: number, campaign?: CampaignVersions): StaleVerdict | undefined {
  const versions = [...seen];
  const order = campaign?.order ?? [];
  let span = 0;
  let lo = "";
  let hi = "";
  for (const a of versions) {
    for (const b of versions) {
      const d = versionDistance(a, b, order);
      if (d !== undefined && d > span) [span, lo, hi] = [d, a, b];
    }
  }
  if (span > maxVersions) return { kind: "span", distance: span, reason: `versions span ${span} > max staleness ${maxVersions} (${lo} .. ${hi})` };
  if (!campaign) return undefined;
  let lag = 0;
  let oldest = "";
  for (const v of versions) {
    const d = versionDistance(v, campaign.current, order);
    if (d !== undefined && d > lag) [lag, oldest] = [d, v];
  }
  if (lag > maxVersions) return { kind: "lag", distance: lag, reason: `version ${oldest} lags the campaign's version ${campaign.current} by ${lag} > max staleness ${maxVersions}` };
  return undefined;
}

/** The widest distance between two of `versions` (undefined ones skipped), by `order` where not whole numbers; undefined when none compare. */
export function versionSpan(versions: Iterable<string | undefined>, order: readonly string[] = []): number | undefined {
  const distinct = new Set<string>();
  for (const v of versions) if (v !== undefined && distinct.size < MAX_TRACKED_VERSIONS) distinct.add(v);
  let span: number | undefined;
  for (const a of distinct) {
    for (const b of distinct) {
      const d = versionDistance(a, b, order);
      if (d !== undefined && d >= 0 && (span === undefined || d > span)) span = d;
    }
  }
  return span;
}

/** Which rule a recorded `stale` reason (as `staleness` words it) broke. */
export function staleKindOf(reason: string): "span" | "lag" {
  return reason.startsWith("versions span") ? "span" : "lag";
}

/** One episode's versions: noted per step, checked against the options. */
export class EpisodePolicyVersions {
  first: string | undefined;
  last: string | undefined;
  private readonly seen = new Set<string>();
  /** Set once the episode was found stale (kept: it stays stale). */
  verdict: StaleVerdict | undefined;

  constructor(private readonly opts: StalenessOptions | undefined) {
    if (opts && !(Number.isSafeInteger(opts.maxVersions) && opts.maxVersions >= 0)) throw new RangeError(`max staleness must be a whole number of versions >= 0, got ${String(opts.maxVersions)}`);
  }

  /** The version of one step's answer (undefined: the policy reported none). */
  note(version: string | undefined): void {
    if (version === undefined) return;
    this.first ??= version;
    this.last = version;
    if (this.seen.size < MAX_TRACKED_VERSIONS) this.seen.add(version);
  }

  /** Checks once more (the campaign's version may have been raised); the verdict when the episode is stale. */
  async check(): Promise<StaleVerdict | undefined> {
    if (!this.opts || this.verdict || this.seen.size === 0) return this.verdict;
    let campaign: CampaignVersions | undefined;
    try {
      // Bounded: a slow read (Redis away) must not hold the episode's steps; the span still counts, the lag waits.
      const read = this.opts.campaignVersions ? await withDeadline(this.opts.campaignVersions(), CAMPAIGN_READ_MS) : undefined;
      campaign = read && !read.timedOut ? read.value : undefined;
    } catch {
      campaign = undefined;
    }
    this.verdict = staleness(this.seen, this.opts.maxVersions, campaign);
    return this.verdict;
  }

  /** Whether staleness is checked at all (without options versions are only recorded: no check to await). */
  get checked(): boolean {
    return this.opts !== undefined;
  }

  /** Whether a stale episode ends (`onStale: "end"`). */
  get ends(): boolean {
    return this.opts?.onStale === "end";
  }

  /** The trajectory's fields: first and last version, and the stale reason. */
  fields(): { firstPolicyVersion?: string; lastPolicyVersion?: string; stale?: string } {
    const out: { firstPolicyVersion?: string; lastPolicyVersion?: string; stale?: string } = {};
    if (this.first !== undefined) out.firstPolicyVersion = this.first;
    if (this.last !== undefined) out.lastPolicyVersion = this.last;
    if (this.verdict) out.stale = this.verdict.reason;
    return out;
  }
}
