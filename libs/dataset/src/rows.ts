/**
 * An episode as rows: its steps (one row each) into the steps columns and one row into the episodes
 * columns, collected column-wise for one shard. Values that cannot be represented in their typed column
 * (an extra logged with another nesting than its shape, or stored as JSON because it did not fit) become
 * null and are counted, never guessed.
 */
import type { A11yObservation, StepExtra, StepRecord } from "@farm/episode";
import type { StoredEpisode } from "@farm/trajectory";
import type { ElementType, ExtraColumn } from "./extras-spec.ts";
import { EPISODE_COLUMNS, NESTED_COLUMNS, STEP_COLUMNS_HEAD, type DatasetLayout } from "./tables.ts";

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

/**
 * The screens of an episode, aligned with its actions: index 0 is the initial screen (what step 1's action
 * was chosen on), index i the screen after step i. Step k's row shows screen k−1: each frame appears once.
 */
interface Screens {
  frames: (Uint8Array | undefined)[];
  a11y: (A11yObservation | undefined)[];
}

function screensOf(e: StoredEpisode): Screens {
  return { frames: [e.initialFrame, ...e.steps.map((s) => s.frame)], a11y: [e.initialA11y, ...e.steps.map((s) => s.a11y)] };
}

/** The action: the AndroidWorld JSON action read from a UI answer, else the answer as given (invalid ones), AndroidEnv's action as JSON for touches. */
export function actionJson(s: StepRecord): string {
  return s.ui ? (s.ui.action ?? s.ui.given) : JSON.stringify({ action_type: s.action.actionType, touch_position: [s.action.touchPosition[0], s.action.touchPosition[1]] });
}

const image = (f: Uint8Array | undefined) => (f ? { bytes: f, path: null } : null);
const elementsJson = (a: A11yObservation | undefined) => (a ? JSON.stringify(a.elements) : null);

/** Column-wise rows of one shard. */
export class ShardRows {
  readonly steps: unknown[][];
  readonly episodes: unknown[][] = EPISODE_COLUMNS.map(() => []);
  readonly episodeIds: string[] = [];
  /** Rows each episode put into the data table (its steps; 1 in the nested layout): splitting a shard needs them. */
  readonly dataRows: number[] = [];
  stepCount = 0;
  /** A safe upper bound of the Parquet bytes these rows can take (see `estimateStep`). */
  boundBytes = 0;
  /** Bytes of the frames (stored as they are: PNG does not compress further). */
  frameBytes = 0;

  constructor(
    private readonly extras: readonly ExtraColumn[],
    readonly counters: RowCounters,
    private readonly layout: DatasetLayout = "steps",
  ) {
    const width = layout === "steps" ? STEP_COLUMNS_HEAD.length + extras.length + 1 : NESTED_COLUMNS.length;
    this.steps = Array.from({ length: width }, () => []);
  }

  /** Rows in the data table (steps, or episodes in the nested layout). */
  get dataRowCount(): number {
    return this.steps[0]!.length;
  }

  addEpisode(e: StoredEpisode): void {
    this.episodeIds.push(e.episodeId);
    const screens = screensOf(e);
    this.addEpisodeRow(e, screens);
    if (this.layout === "steps") this.addStepRows(e, screens);
    else this.addNestedRow(e, screens);
    this.dataRows.push(this.layout === "steps" ? e.steps.length : 1);
    this.stepCount += e.steps.length;
    const b = episodeBound(e, this.extras);
    this.boundBytes += b.boundBytes;
    this.frameBytes += b.frameBytes;
  }

  private addStepRows(e: StoredEpisode, screens: Screens): void {
    const n = e.steps.length;
    const terminated = e.outcome === "terminated";
    const goal = e.goal || null; // "" = no goal (files before v3)
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
      cols[c++]!.push(goal);
      cols[c++]!.push(actionJson(s));
      cols[c++]!.push(s.ui?.resolved ? JSON.stringify(s.ui.resolved) : null);
      cols[c++]!.push(s.ui?.invalid ?? null);
      cols[c++]!.push(elementsJson(screens.a11y[i]));
      cols[c++]!.push(screens.a11y[i]?.tree ?? null);
      cols[c++]!.push(s.policyVersion ?? null);
      cols[c++]!.push(s.policyMs ?? null);
      cols[c++]!.push(s.settleMs ?? null);
      cols[c++]!.push(s.settleCapped ?? false);
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
      cols[c++]!.push(image(screens.frames[i]));
    }
  }

  private addNestedRow(e: StoredEpisode, screens: Screens): void {
    const row: unknown[] = [
      e.episodeId, e.taskId, e.policyName, e.goal || null, e.outcome, e.cause, e.totalReward, e.agentStatus ?? null, e.answer ?? null,
      e.invalidActions ?? 0, e.steps.length,
      screens.frames.map(image),
      screens.a11y.map(elementsJson),
      screens.a11y.map((a) => a?.tree ?? null),
      e.steps.map(actionJson),
      e.steps.map((s) => (s.ui?.resolved ? JSON.stringify(s.ui.resolved) : null)),
      e.steps.map((s) => s.ui?.invalid ?? null),
      e.steps.map((s) => s.reward),
      e.settle || null,
      e.steps.map((s) => s.settleMs ?? null),
      e.steps.map((s) => s.settleCapped ?? false),
      ...scoreCells(e),
      e.steps.map((s) => s.policyVersion ?? null),
      e.steps.map((s) => s.policyMs ?? null),
      ...versionCells(e),
    ];
    row.forEach((value, i) => this.steps[i]!.push(value));
  }

  private addEpisodeRow(e: StoredEpisode, screens: Screens): void {
    const n = e.steps.length;
    const row: unknown[] = [
      e.episodeId, e.campaignId, BigInt(e.episodeIndex), e.attempt, e.taskId, e.taskHash, e.taskDialect ?? null,
      e.policyName, e.policyVersion, BigInt(e.seed), e.outcome, e.cause, e.causeDetail, e.totalReward, e.steps.length,
      e.frameEvery, e.startedAt.getTime(), e.endedAt.getTime(), BigInt(e.endedAt.getTime() - e.startedAt.getTime()),
      e.deviceSerial, e.worker, e.resetKind ?? null, JSON.stringify(sortedCounters(e.counters)),
      e.goal || null, e.agentStatus ?? null, e.answer ?? null, e.invalidActions ?? 0, e.a11yEvery ?? 0, e.settle || null,
      // The screen after the last step; the nested layout already holds it as its last screenshot.
      this.layout === "steps" ? image(screens.frames[n]) : null,
      this.layout === "steps" ? elementsJson(screens.a11y[n]) : null,
      this.layout === "steps" ? (screens.a11y[n]?.tree ?? null) : null,
      ...scoreCells(e),
      ...versionCells(e),
      ...(e.groupIndex !== undefined ? [BigInt(e.groupIndex), e.groupMember ?? 0, e.groupSize ?? 0] : [null, null, null]),
    ];
    row.forEach((value, i) => this.episodes[i]!.push(value));
  }
}

/** `success`, `params`, `checks`, `score_error` (tables.ts SCORE_COLUMNS) of an episode. */
function scoreCells(e: StoredEpisode): unknown[] {
  let params: string | null = null;
  if (e.params) {
    const sorted = Object.create(null) as Record<string, unknown>;
    for (const k of Object.keys(e.params).sort()) sorted[k] = e.params[k];
    params = JSON.stringify(sorted);
  }
  const checks = (e.checks ?? []).map((c) => ({ name: c.name, kind: c.kind, passed: c.passed, observed: c.observed, expected: c.expected, error: c.error ?? null }));
  return [e.success ?? null, params, checks, e.scoreError ?? null];
}

/** `first_policy_version`, `last_policy_version`, `stale` (tables.ts VERSION_COLUMNS) of an episode. */
function versionCells(e: StoredEpisode): unknown[] {
  return [e.firstPolicyVersion ?? null, e.lastPolicyVersion ?? null, e.stale ?? null];
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
  const goal = (e.goal?.length ?? 0) * 3;
  let bound = 256 + e.episodeId.length * 4 + e.causeDetail.length * 3 + goal + (e.answer?.length ?? 0) * 3 + a11yBound(e.initialA11y) + scoreBound(e);
  let frames = e.initialFrame?.byteLength ?? 0;
  bound += frames;
  for (const s of e.steps) {
    bound += 176 + e.episodeId.length * 2 + goal + a11yBound(s.a11y) + (s.policyVersion?.length ?? 0) * 6;
    if (s.ui) bound += 48 + (s.ui.given.length + (s.ui.invalid?.length ?? 0)) * 3 + (s.ui.resolved ? 64 + (s.ui.resolved.text?.length ?? 0) * 6 + (s.ui.resolved.app?.length ?? 0) * 3 : 0);
    for (const x of s.extras) if (names.has(x.name)) bound += 8 + estimateValueBytes(x.value);
    if (s.frame) {
      bound += s.frame.byteLength + 32;
      frames += s.frame.byteLength;
    }
  }
  return { boundBytes: bound, frameBytes: frames };
}

/** Upper bound of the score columns: parameters as JSON, each check's texts, the error (UTF-8, escapes included). */
function scoreBound(e: StoredEpisode): number {
  let n = 32 + (e.scoreError?.length ?? 0) * 3 + ((e.firstPolicyVersion?.length ?? 0) + (e.lastPolicyVersion?.length ?? 0) + (e.stale?.length ?? 0)) * 3 + 16;
  if (e.params) for (const [k, v] of Object.entries(e.params)) n += 8 + (k.length + String(v).length) * 6;
  for (const c of e.checks ?? []) n += 48 + (c.name.length + c.kind.length + c.observed.length + c.expected.length + (c.error?.length ?? 0)) * 3;
  return n;
}

/** Upper bound of a recorded screen's text columns: the tree as it is, the elements as JSON (escapes included). */
function a11yBound(a: A11yObservation | undefined): number {
  if (!a) return 0;
  let n = a.tree.length * 3 + 16;
  for (const el of a.elements) {
    n += 400 + (el.class_name.length + el.text.length + el.content_description.length + el.hint_text.length + el.resource_id.length + el.package_name.length) * 6;
  }
  return n;
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
