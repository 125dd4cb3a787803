/** Converts between the farm's in-memory episode and the Avro record of `episodeSchema`. */
import type { A11yObservation, StepRecord } from "@farm/episode";
import type { Action, GoalStatus, ResolvedUiAction, UiElement } from "@farm/policy";
import type { Dialect } from "@farm/task";
import { isAvroLong } from "./avro-long.ts";
import { episodeIdOf } from "./episode-id.ts";
import { extraFromAvro, extraToAvro, type AvroExtra } from "./extras-codec.ts";
import { resolveReadLimits, type ReadLimits } from "./read-limits.ts";
import { SCHEMA_VERSION } from "./schema.ts";
import { TrajectoryError, type EpisodeRecord, type StoredEpisode } from "./types.ts";
import { coerceError } from "@farm/errors";

interface AvroStep {
  index: number;
  timeOffsetMs: number;
  action: { actionType: Action["actionType"]; x: number; y: number };
  reward: number;
  extras: AvroExtra[];
  frame: Buffer | null;
  /** v3 */
  a11y?: AvroA11y | null;
  ui?: AvroUiStep | null;
  /** v5 */
  settleMs?: number | null;
  settleCapped?: boolean;
  policyVersion?: string | null;
  policyMs?: number | null;
  instruction?: string | null;
}

/** v3: the Avro shape of `A11yObservation` (elements are UiElements with bounds as a plain array). */
interface AvroA11y {
  tree: string;
  elements: UiElement[];
}

interface AvroUiStep {
  given: string;
  action?: string | null;
  resolved: string | null;
  invalid: string | null;
}

/** The Avro shape of `farm.trajectory.Episode` (version 3 fields; newer readers may see more). */
export interface AvroEpisode {
  schemaVersion: number;
  episodeId: string;
  campaignId: string;
  episodeIndex: number;
  attempt: number;
  taskId: string;
  taskHash: string;
  taskDialect: string | null;
  policyName: string;
  policyVersion: string;
  seed: number;
  worker: string;
  deviceSerial: string;
  startedAt: Date;
  endedAt: Date;
  outcome: EpisodeRecord["outcome"];
  cause: string;
  causeDetail: string;
  totalReward: number;
  stepCount: number;
  frameEvery: number;
  counters: Record<string, number>;
  steps: AvroStep[];
  /** v2 */
  frameEncoding: string;
  resetKind: string;
  resetMs: number | null;
  /** v3 (absent when read with an older reader schema) */
  goal?: string;
  a11yEvery?: number;
  initialFrame?: Buffer | null;
  initialA11y?: AvroA11y | null;
  agentStatus?: string | null;
  answer?: string | null;
  invalidActions?: number;
  /** v4 (absent when read with an older reader schema) */
  params?: Record<string, string>;
  success?: number | null;
  checks?: AvroCheck[];
  scoreError?: string | null;
  /** v5 (absent when read with an older reader schema) */
  settle?: string;
  groupIndex?: number | null;
  groupMember?: number;
  groupSize?: number;
  firstPolicyVersion?: string | null;
  lastPolicyVersion?: string | null;
  stale?: string | null;
}

interface AvroCheck {
  name: string;
  kind: string;
  passed: boolean;
  observed: string;
  expected: string;
  error: string | null;
}

function invalid(record: EpisodeRecord, why: string): TrajectoryError {
  return new TrajectoryError("invalid_record", `episode ${JSON.stringify(record.episodeId)}: ${why}`);
}

/** Checks the identity fields that duplicate detection and partitioning rely on. */
function checkIdentity(r: EpisodeRecord): void {
  if (r.episodeId !== episodeIdOf(r.campaignId, r.episodeIndex)) {
    throw invalid(r, `episodeId must be episodeIdOf(campaignId, episodeIndex) = ${JSON.stringify(episodeIdOf(r.campaignId, r.episodeIndex))}`);
  }
  if (!isAvroLong(r.episodeIndex) || r.episodeIndex < 0) throw invalid(r, "episodeIndex must be a non-negative integer");
  if (!Number.isInteger(r.attempt) || r.attempt < 1) throw invalid(r, "attempt must be an integer >= 1");
  if (!r.taskId) throw invalid(r, "taskId is empty");
  if (!(r.startedAt instanceof Date) || Number.isNaN(r.startedAt.getTime())) throw invalid(r, "startedAt is not a valid Date");
  if (!(r.endedAt instanceof Date) || Number.isNaN(r.endedAt.getTime())) throw invalid(r, "endedAt is not a valid Date");
  if (!isAvroLong(r.seed)) throw invalid(r, "seed must be an integer within ±(2^53 − 2)");
}

function effectiveFrameEvery(r: EpisodeRecord, writerFrameEvery: number): number {
  const k = r.frameEvery ?? writerFrameEvery;
  if (!Number.isSafeInteger(k) || k < 0) throw invalid(r, "frameEvery must be 0 (no frames) or a positive integer");
  return k;
}

/** Whether a step's frame is stored under cadence `frameEvery` (0 = never). */
function keepsFrame(step: StepRecord, frameEvery: number): boolean {
  return frameEvery > 0 && step.frame !== undefined && step.index % frameEvery === 0;
}

/** How many frames of the record its Avro form stores (`writerFrameEvery` as in episodeToAvro). */
export function framesKept(r: EpisodeRecord, writerFrameEvery: number): number {
  const frameEvery = effectiveFrameEvery(r, writerFrameEvery);
  let n = 0;
  for (const s of r.steps) if (keepsFrame(s, frameEvery)) n++;
  return n;
}

function stepToAvro(step: StepRecord, frameEvery: number): AvroStep {
  const keepFrame = keepsFrame(step, frameEvery);
  const f = step.frame;
  return {
    index: step.index,
    timeOffsetMs: Math.round(step.timeOffsetMs),
    action: { actionType: step.action.actionType, x: step.action.touchPosition[0], y: step.action.touchPosition[1] },
    reward: step.reward,
    extras: step.extras.map(extraToAvro),
    // Buffer view over the same memory: no copy of the PNG bytes.
    frame: keepFrame && f ? asBuffer(f) : null,
    a11y: step.a11y ? a11yToAvro(step.a11y) : null,
    ui: step.ui ? { given: step.ui.given, action: step.ui.action ?? null, resolved: step.ui.resolved ? JSON.stringify(step.ui.resolved) : null, invalid: step.ui.invalid ?? null } : null,
    settleMs: step.settleMs ?? null,
    settleCapped: step.settleCapped ?? false,
    policyVersion: step.policyVersion ?? null,
    policyMs: step.policyMs ?? null,
    instruction: step.instruction ?? null,
  };
}

/** A Buffer view over the same memory: no copy of the frame bytes. */
function asBuffer(f: Uint8Array): Buffer {
  return Buffer.isBuffer(f) ? f : Buffer.from(f.buffer, f.byteOffset, f.byteLength);
}

function a11yToAvro(a: A11yObservation): AvroA11y {
  // Only the schema's fields, bounds as a plain array: extra keys a policy left on an element are not stored.
  return { tree: a.tree, elements: a.elements.map((e) => Object.assign(pickElement(e), { bounds: [...e.bounds] as UiElement["bounds"] })) };
}

const ELEMENT_KEYS = [
  "index", "class_name", "text", "content_description", "hint_text", "resource_id", "package_name", "bounds",
  "is_clickable", "is_long_clickable", "is_editable", "is_scrollable", "is_checkable", "is_checked", "is_focused", "is_enabled", "is_selected",
] as const satisfies readonly (keyof UiElement)[];

function pickElement(e: UiElement): UiElement {
  const out = {} as Record<string, unknown>;
  for (const k of ELEMENT_KEYS) out[k] = e[k];
  return out as unknown as UiElement;
}

function a11yFromAvro(a: AvroA11y): A11yObservation {
  return { tree: a.tree, elements: a.elements.map((e) => Object.assign({}, e, { bounds: [...e.bounds] as UiElement["bounds"] })) };
}

/** The resolved UI action's JSON as written by stepToAvro; anything else is an error naming the step. */
function resolvedFromAvro(text: string, stepIndex: number): ResolvedUiAction {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new Error(`steps[${stepIndex}].ui.resolved is not JSON: ${coerceError(err).message}`);
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw new Error(`steps[${stepIndex}].ui.resolved is not a JSON object`);
  return v as ResolvedUiAction;
}

/** `writerFrameEvery` applies when the record does not carry its own cadence. */
export function episodeToAvro(r: EpisodeRecord, writerFrameEvery: number): AvroEpisode {
  checkIdentity(r);
  const frameEvery = effectiveFrameEvery(r, writerFrameEvery);
  const counters: Record<string, number> = {};
  for (const [k, v] of Object.entries(r.counters)) counters[k] = Math.round(v);
  return {
    schemaVersion: SCHEMA_VERSION,
    episodeId: r.episodeId,
    campaignId: r.campaignId,
    episodeIndex: r.episodeIndex,
    attempt: r.attempt,
    taskId: r.taskId,
    taskHash: r.taskHash,
    taskDialect: r.taskDialect ?? null,
    policyName: r.policyName,
    policyVersion: r.policyVersion,
    seed: r.seed,
    worker: r.worker,
    deviceSerial: r.deviceSerial,
    startedAt: r.startedAt,
    endedAt: r.endedAt,
    outcome: r.outcome,
    cause: r.cause,
    causeDetail: r.causeDetail,
    totalReward: r.totalReward,
    stepCount: r.steps.length,
    frameEvery,
    counters,
    steps: r.steps.map((s) => stepToAvro(s, frameEvery)),
    frameEncoding: r.frameEncoding ?? "png",
    resetKind: r.resetKind ?? "steps",
    resetMs: r.resetMs ?? null,
    goal: r.goal ?? "",
    a11yEvery: r.a11yEvery ?? 0,
    initialFrame: frameEvery > 0 && r.initialFrame ? asBuffer(r.initialFrame) : null,
    initialA11y: r.initialA11y ? a11yToAvro(r.initialA11y) : null,
    agentStatus: r.agentStatus ?? null,
    answer: r.answer ?? null,
    invalidActions: r.invalidActions ?? 0,
    ...scoreFieldsToAvro(r),
    ...rolloutFieldsToAvro(r),
  };
}

/** v5: the settle policy, the group, the policy versions and staleness. */
function rolloutFieldsToAvro(r: EpisodeRecord): Pick<AvroEpisode, "settle" | "groupIndex" | "groupMember" | "groupSize" | "firstPolicyVersion" | "lastPolicyVersion" | "stale"> {
  if (r.groupIndex !== undefined && !(isAvroLong(r.groupIndex) && r.groupIndex >= 0)) throw invalid(r, "groupIndex must be a non-negative integer");
  return {
    settle: r.settle ?? "",
    groupIndex: r.groupIndex ?? null,
    groupMember: r.groupMember ?? 0,
    groupSize: r.groupSize ?? 0,
    firstPolicyVersion: r.firstPolicyVersion ?? null,
    lastPolicyVersion: r.lastPolicyVersion ?? null,
    stale: r.stale ?? null,
  };
}

/** v5 fields: the plain ones when the reader schema has them, the nullable ones only when set. */
function rolloutFieldsFromAvro(a: AvroEpisode, out: StoredEpisode): void {
  if (a.settle) out.settle = a.settle;
  if (a.groupIndex !== null && a.groupIndex !== undefined) {
    out.groupIndex = a.groupIndex;
    out.groupMember = a.groupMember ?? 0;
    out.groupSize = a.groupSize ?? 0;
  }
  if (a.firstPolicyVersion !== null && a.firstPolicyVersion !== undefined) out.firstPolicyVersion = a.firstPolicyVersion;
  if (a.lastPolicyVersion !== null && a.lastPolicyVersion !== undefined) out.lastPolicyVersion = a.lastPolicyVersion;
  if (a.stale !== null && a.stale !== undefined) out.stale = a.stale;
}

function stepRolloutFieldsFromAvro(s: AvroStep, step: StepRecord): void {
  if (s.settleMs !== null && s.settleMs !== undefined) step.settleMs = s.settleMs;
  if (s.settleCapped) step.settleCapped = true;
  if (s.policyVersion !== null && s.policyVersion !== undefined) step.policyVersion = s.policyVersion;
  if (s.policyMs !== null && s.policyMs !== undefined) step.policyMs = s.policyMs;
  if (s.instruction !== null && s.instruction !== undefined) step.instruction = s.instruction;
}

/** v4: parameters as JSON text by name, the final score's success, checks and error. */
function scoreFieldsToAvro(r: EpisodeRecord): Pick<AvroEpisode, "params" | "success" | "checks" | "scoreError"> {
  const params: Record<string, string> = {};
  if (r.params) for (const [k, v] of Object.entries(r.params)) params[k] = JSON.stringify(v);
  if (r.success !== undefined && !(Number.isFinite(r.success) && r.success >= 0 && r.success <= 1)) throw invalid(r, `success must be a number in [0, 1], not ${r.success}`);
  return {
    params,
    success: r.success ?? null,
    checks: (r.checks ?? []).map((c) => ({ name: c.name, kind: c.kind, passed: c.passed, observed: c.observed, expected: c.expected, error: c.error ?? null })),
    scoreError: r.scoreError ?? null,
  };
}

/** v4 fields: set only when the record has them (no instance: no params, success, checks or error). */
function scoreFieldsFromAvro(a: AvroEpisode, out: StoredEpisode): void {
  if (a.params && Object.keys(a.params).length > 0) {
    const params: Record<string, string | number | boolean> = Object.create(null);
    for (const [k, text] of Object.entries(a.params)) {
      let v: unknown;
      try {
        v = JSON.parse(text);
      } catch {
        v = text;
      }
      params[k] = typeof v === "string" || typeof v === "number" || typeof v === "boolean" ? v : text;
    }
    out.params = params;
  }
  if (a.success !== null && a.success !== undefined) out.success = a.success;
  if (a.checks && a.checks.length > 0) out.checks = a.checks.map((c) => ({ name: c.name, kind: c.kind, passed: c.passed, observed: c.observed, expected: c.expected, ...(c.error !== null ? { error: c.error } : {}) }));
  if (a.scoreError !== null && a.scoreError !== undefined) out.scoreError = a.scoreError;
}

export function episodeFromAvro(a: AvroEpisode, file: string, limits: Pick<ReadLimits, "maxShapeNodes"> = resolveReadLimits()): StoredEpisode {
  const shapeBudget = { nodes: limits.maxShapeNodes };
  const out: StoredEpisode = {
    schemaVersion: a.schemaVersion,
    frameEvery: a.frameEvery,
    file,
    episodeId: a.episodeId,
    campaignId: a.campaignId,
    episodeIndex: a.episodeIndex,
    attempt: a.attempt,
    worker: a.worker,
    taskId: a.taskId,
    taskHash: a.taskHash,
    deviceSerial: a.deviceSerial,
    policyName: a.policyName,
    policyVersion: a.policyVersion,
    seed: a.seed,
    startedAt: a.startedAt,
    endedAt: a.endedAt,
    outcome: a.outcome,
    cause: a.cause as StoredEpisode["cause"],
    causeDetail: a.causeDetail,
    totalReward: a.totalReward,
    counters: { ...a.counters },
    steps: a.steps.map((s, stepIndex) => {
      const step: StepRecord = {
        index: s.index,
        timeOffsetMs: s.timeOffsetMs,
        action: { actionType: s.action.actionType, touchPosition: [s.action.x, s.action.y] },
        reward: s.reward,
        extras: s.extras.map((x) => {
          try {
            return extraFromAvro(x, shapeBudget);
          } catch (err) {
            throw new Error(`steps[${stepIndex}] extra ${JSON.stringify(String(x.name).slice(0, 100))}: ${coerceError(err).message}`);
          }
        }),
      };
      if (s.frame) step.frame = s.frame;
      if (s.a11y) step.a11y = a11yFromAvro(s.a11y);
      if (s.ui) {
        step.ui = { given: s.ui.given };
        if (s.ui.action !== null && s.ui.action !== undefined) step.ui.action = s.ui.action;
        if (s.ui.resolved !== null) step.ui.resolved = resolvedFromAvro(s.ui.resolved, stepIndex);
        if (s.ui.invalid !== null) step.ui.invalid = s.ui.invalid;
      }
      stepRolloutFieldsFromAvro(s, step);
      return step;
    }),
  };
  if (a.taskDialect !== null) out.taskDialect = a.taskDialect as Dialect;
  out.frameEncoding = a.frameEncoding ?? "png";
  out.resetKind = (a.resetKind ?? "steps") as StoredEpisode["resetKind"];
  if (a.resetMs !== null && a.resetMs !== undefined) out.resetMs = a.resetMs;
  agentFieldsFromAvro(a, out);
  scoreFieldsFromAvro(a, out);
  rolloutFieldsFromAvro(a, out);
  return out;
}

/**
 * v3 fields. Like the v2 ones, the fields with a plain default are always set (a file before v3 read with
 * today's schema gets goal "", a11yEvery 0, invalidActions 0, as the runner records them for any episode);
 * the nullable ones only when present. A reader schema without them (an older version) leaves all unset.
 */
function agentFieldsFromAvro(a: AvroEpisode, out: StoredEpisode): void {
  if (a.goal !== undefined) out.goal = a.goal;
  if (a.a11yEvery !== undefined) out.a11yEvery = a.a11yEvery;
  if (a.invalidActions !== undefined) out.invalidActions = a.invalidActions;
  if (a.initialFrame) out.initialFrame = a.initialFrame;
  if (a.initialA11y) out.initialA11y = a11yFromAvro(a.initialA11y);
  if (a.agentStatus !== null && a.agentStatus !== undefined) out.agentStatus = a.agentStatus as GoalStatus;
  if (a.answer !== null && a.answer !== undefined) out.answer = a.answer;
}
