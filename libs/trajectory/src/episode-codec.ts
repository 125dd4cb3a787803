/** Converts between the farm's in-memory episode and the Avro record of `episodeSchema`. */
import type { StepRecord } from "@farm/episode";
import type { Action } from "@farm/policy";
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
}

/** The Avro shape of `farm.trajectory.Episode` (version 2 fields; newer readers may see more). */
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
    frame: keepFrame && f ? (Buffer.isBuffer(f) ? f : Buffer.from(f.buffer, f.byteOffset, f.byteLength)) : null,
  };
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
  };
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
      return step;
    }),
  };
  if (a.taskDialect !== null) out.taskDialect = a.taskDialect as Dialect;
  out.frameEncoding = a.frameEncoding ?? "png";
  out.resetKind = (a.resetKind ?? "steps") as StoredEpisode["resetKind"];
  if (a.resetMs !== null && a.resetMs !== undefined) out.resetMs = a.resetMs;
  return out;
}
