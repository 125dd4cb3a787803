/**
 * An episode as rows: its steps (one row each) into the steps columns and one row into the episodes
 * columns, collected column-wise for one shard. Values that cannot be represented in their typed column
 * (an extra logged with another nesting than its shape, or stored as JSON because it did not fit) become
 * null and are counted, never guessed.
 */
import type { StepExtra } from "@farm/episode";
import type { StoredEpisode } from "@farm/trajectory";
import type { ElementType, ExtraColumn } from "./extras-spec.ts";
import { EPISODE_COLUMNS, STEP_COLUMNS_HEAD } from "./tables.ts";

export interface RowCounters {
  /** Extra values stored as null because they did not fit their typed column. */
  extrasUnrepresentable: number;
}

const leafOk: Record<ElementType, (v: unknown) => boolean> = {
  int8: Number.isInteger, int16: Number.isInteger, int32: Number.isInteger, int64: Number.isInteger,
  uint8: isUnsigned, uint16: isUnsigned, uint32: isUnsigned, uint64: isUnsigned,
  float32: isNumber, float64: isNumber, bool: (v) => typeof v === "boolean", string: (v) => typeof v === "string",
};
function isNumber(v: unknown): boolean {
  return typeof v === "number";
}
function isUnsigned(v: unknown): boolean {
  return Number.isInteger(v) && (v as number) >= 0;
}

const BIG = new Set<ElementType>(["int64", "uint64"]);

/** The value nested `rank` deep with fitting leaves (int64 leaves as bigint), or undefined. */
function typedValue(v: unknown, rank: number, element: ElementType): unknown {
  if (rank === 0) {
    if (Array.isArray(v) || !leafOk[element](v)) return undefined;
    return BIG.has(element) ? BigInt(v as number) : v;
  }
  if (!Array.isArray(v)) return undefined;
  const out = new Array<unknown>(v.length);
  for (let i = 0; i < v.length; i++) {
    const inner = typedValue(v[i], rank - 1, element);
    if (inner === undefined) return undefined;
    out[i] = inner;
  }
  return out;
}

function extraValue(e: StepExtra, col: ExtraColumn, counters: RowCounters): unknown {
  if (col.rank === 0 && col.element === "string" && col.dtype === "OBJECT") return JSON.stringify(e.value ?? null);
  const t = typedValue(e.value, col.rank, col.element);
  if (t === undefined) {
    counters.extrasUnrepresentable++;
    return null;
  }
  return t;
}

/** Column-wise rows of one shard. */
export class ShardRows {
  readonly steps: unknown[][];
  readonly episodes: unknown[][] = EPISODE_COLUMNS.map(() => []);
  readonly episodeIds: string[] = [];
  stepCount = 0;
  /** A safe upper bound of the Parquet bytes these rows can take (see `estimateStep`). */
  boundBytes = 0;
  /** Bytes of the frames (stored as they are: PNG does not compress further). */
  frameBytes = 0;

  constructor(private readonly extras: readonly ExtraColumn[], readonly counters: RowCounters) {
    this.steps = Array.from({ length: STEP_COLUMNS_HEAD.length + extras.length + 1 }, () => []);
  }

  addEpisode(e: StoredEpisode): void {
    this.episodeIds.push(e.episodeId);
    this.addEpisodeRow(e);
    const n = e.steps.length;
    const terminated = e.outcome === "terminated";
    let prevOffset = 0;
    const byName = new Map<string, StepExtra[]>();
    for (let i = 0; i < n; i++) {
      const s = e.steps[i]!;
      const last = i === n - 1;
      const cols = this.steps;
      let c = 0;
      cols[c++]!.push(e.episodeId);
      cols[c++]!.push(s.index);
      cols[c++]!.push(s.action.actionType);
      cols[c++]!.push([s.action.touchPosition[0], s.action.touchPosition[1]]);
      cols[c++]!.push(s.reward);
      cols[c++]!.push(last && terminated ? 0 : 1);
      cols[c++]!.push(i === 0);
      cols[c++]!.push(last);
      cols[c++]!.push(last && terminated);
      cols[c++]!.push(BigInt(s.timeOffsetMs));
      cols[c++]!.push(BigInt(s.timeOffsetMs - prevOffset));
      prevOffset = s.timeOffsetMs;
      byName.clear();
      for (const x of s.extras) {
        const list = byName.get(x.name);
        if (list) list.push(x);
        else byName.set(x.name, [x]);
      }
      for (const col of this.extras) {
        const logged = byName.get(col.name);
        cols[c++]!.push(logged ? logged.map((x) => extraValue(x, col, this.counters)) : null);
      }
      const f = s.frame;
      cols[c++]!.push(f ? { bytes: f, path: null } : null);
      this.stepCount++;
    }
    const b = episodeBound(e, this.extras);
    this.boundBytes += b.boundBytes;
    this.frameBytes += b.frameBytes;
  }

  private addEpisodeRow(e: StoredEpisode): void {
    const row: unknown[] = [
      e.episodeId, e.campaignId, BigInt(e.episodeIndex), e.attempt, e.taskId, e.taskHash, e.taskDialect ?? null,
      e.policyName, e.policyVersion, BigInt(e.seed), e.outcome, e.cause, e.causeDetail, e.totalReward, e.steps.length,
      e.frameEvery, e.startedAt.getTime(), e.endedAt.getTime(), BigInt(e.endedAt.getTime() - e.startedAt.getTime()),
      e.deviceSerial, e.worker, null, JSON.stringify(sortedCounters(e.counters)),
    ];
    row.forEach((value, i) => this.episodes[i]!.push(value));
  }
}

/** Counters with sorted keys, so the JSON text does not depend on insertion order. */
function sortedCounters(c: Record<string, number>): Record<string, number> {
  const out = Object.create(null) as Record<string, number>;
  for (const k of Object.keys(c).sort()) out[k] = c[k]!;
  return out;
}

/**
 * A safe upper bound of the Parquet bytes an episode's rows take before compression (plain encoding or
 * dictionary indices, levels, offsets and page headers), and the part of it that is frame bytes.
 */
export function episodeBound(e: StoredEpisode, extras: readonly ExtraColumn[]): { boundBytes: number; frameBytes: number } {
  const names = new Set(extras.map((c) => c.name));
  let bound = 256 + e.episodeId.length * 4 + e.causeDetail.length * 3;
  let frames = 0;
  for (const s of e.steps) {
    bound += 160 + e.episodeId.length * 2;
    for (const x of s.extras) if (names.has(x.name)) bound += 8 + estimateValueBytes(x.value);
    if (s.frame) {
      bound += s.frame.byteLength + 32;
      frames += s.frame.byteLength;
    }
  }
  return { boundBytes: bound, frameBytes: frames };
}

/**
 * Upper bound of a value's Parquet bytes: 8 per leaf + 4 per level for repetition/definition levels and
 * offsets, strings by their UTF-8 length (×3 for UTF-16 units) + 4.
 */
function estimateValueBytes(v: unknown): number {
  if (Array.isArray(v)) {
    let n = 4;
    for (const x of v) n += estimateValueBytes(x);
    return n;
  }
  if (typeof v === "string") return v.length * 3 + 8;
  return 12;
}
