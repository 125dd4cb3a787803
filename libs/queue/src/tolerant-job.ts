/**
 * Jobs whose stored payload is not JSON (or is absurdly large) must fail at once with a clear reason,
 * not sit in `active` forever: BullMQ's `Job.fromJSON` throws on such data inside the worker's fetch
 * loop, before any processor runs, so the job is never failed and only stalls.
 *
 * `EpisodeJobWorker` and `EpisodeQueue` are BullMQ's Worker and Queue with a Job class whose
 * `fromJSON` keeps such a payload as an `UnparseablePayload`; `parseEpisodeJob` then refuses it with
 * `JOB_PAYLOAD_INVALID` naming the job id, and queue readers (the scheduler, the queue UI) can list it.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- mirrors BullMQ's own generic defaults */
import { Job, Queue } from "bullmq";
import { BurstFetchWorker } from "./burst-fetch-worker.ts";
import { coerceError } from "@farm/errors";

/** Larger stored payloads are not parsed (an episode job is a few hundred bytes). */
export const MAX_JOB_PAYLOAD_CHARS = 64 * 1024;

/** Stands in for the data of a job whose stored payload could not be parsed. */
export class UnparseablePayload {
  constructor(
    readonly why: string,
    /** A short, printable excerpt of the stored text. */
    readonly excerpt: string,
  ) {}
  toJSON(): unknown {
    return { unparseablePayload: this.why, excerpt: this.excerpt };
  }
}

function excerptOf(raw: string): string {
  const s = raw.slice(0, 200).replace(/[^\x20-\x7e]/g, "?");
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

type JobJsonLike = { data?: string } & Record<string, unknown>;

/** The stored payload checked: too large or not JSON → an UnparseablePayload in its place. */
function tolerantJson(json: JobJsonLike): JobJsonLike {
  const raw = json.data;
  if (typeof raw !== "string" || raw === "") return json;
  if (raw.length > MAX_JOB_PAYLOAD_CHARS) return { ...json, data: JSON.stringify(new UnparseablePayload(`payload of ${raw.length} characters exceeds ${MAX_JOB_PAYLOAD_CHARS}`, excerptOf(raw))) };
  try {
    JSON.parse(raw);
    return json;
  } catch (e) {
    return { ...json, data: JSON.stringify(new UnparseablePayload(`payload is not JSON (${coerceError(e).message.slice(0, 80)})`, excerptOf(raw))) };
  }
}

/** A Job whose construction from Redis never throws on its payload. */
export class TolerantJob extends Job {
  static override fromJSON<T = any, R = any, N extends string = string>(queue: Parameters<typeof Job.fromJSON>[0], json: Parameters<typeof Job.fromJSON>[1], jobId?: string): Job<T, R, N> {
    const job = super.fromJSON<T, R, N>(queue, tolerantJson(json as unknown as JobJsonLike) as unknown as typeof json, jobId);
    const d = job.data as { unparseablePayload?: unknown; excerpt?: unknown } | undefined;
    if (d && typeof d === "object" && typeof d.unparseablePayload === "string" && Object.keys(d).length === 2) {
      job.data = new UnparseablePayload(d.unparseablePayload, String(d.excerpt ?? "")) as T;
    }
    return job;
  }
}

/**
 * BullMQ Worker that fails unparseable jobs through the processor instead of stalling on them, and takes
 * bursts of waiting jobs in one round trip (burst-fetch-worker.ts).
 */
export class EpisodeJobWorker<D = unknown, R = unknown> extends BurstFetchWorker<D, R> {
  protected override get Job(): typeof Job {
    return TolerantJob as unknown as typeof Job;
  }
}

/** BullMQ Queue that can read back jobs whose payload is not JSON (for listing, reconciling, the UI). */
export class EpisodeQueue<D = unknown, R = unknown> extends Queue<D, R> {
  protected override get Job(): typeof Job {
    return TolerantJob as unknown as typeof Job;
  }
}
