/**
 * One stack of things to release (servers, child processes, sessions, files), released in reverse order of
 * acquisition: what was started last depends on what was started before it, so it goes first.
 *
 *   const releasers = new Releasers();
 *   const redis = await startRedis();  releasers.add("redis", () => redis.close());
 *   const worker = await start(redis); releasers.add("worker", () => worker.close());
 *   await releasers.releaseAll();      // worker, then redis; every one runs even when one fails
 */
import { coerceError } from "@farm/errors";

export interface ReleaseFailure {
  what: string;
  error: Error;
}

export interface ReleaseOptions {
  /** Told about each failure as it happens (e.g. a log line); the others still run. */
  onError?(failure: ReleaseFailure): void;
}

type Entry = { what: string; release: () => unknown };

export class Releasers {
  private readonly stack: Entry[] = [];
  private releasing: Promise<ReleaseFailure[]> | undefined;

  /** Adds a release step; `what` names it in failures. Adding after releaseAll started releases it at once. */
  add(what: string, release: () => unknown): void;
  add(release: () => unknown): void;
  add(a: string | (() => unknown), b?: () => unknown): void {
    const entry: Entry = typeof a === "string" ? { what: a, release: b! } : { what: a.name || "resource", release: a };
    if (this.releasing) void this.releasing.then(() => runOne(entry));
    else this.stack.push(entry);
  }

  get size(): number {
    return this.stack.length;
  }

  /**
   * Runs every step, last added first, each after the previous one settled; resolves with the failures
   * (also given to `onError`). Idempotent: a second call waits for the first and gets the same list.
   */
  releaseAll(opts: ReleaseOptions = {}): Promise<ReleaseFailure[]> {
    this.releasing ??= (async () => {
      const failures: ReleaseFailure[] = [];
      while (this.stack.length > 0) {
        const f = await runOne(this.stack.pop()!);
        if (f) {
          failures.push(f);
          opts.onError?.(f);
        }
      }
      return failures;
    })();
    return this.releasing;
  }

  /** As releaseAll, and throws an AggregateError naming every failed step when any failed. */
  async releaseAllOrThrow(): Promise<void> {
    const failures = await this.releaseAll();
    if (failures.length > 0) throw new AggregateError(failures.map((f) => f.error), `release failed: ${failures.map((f) => `${f.what}: ${f.error.message}`).join("; ")}`);
  }
}

async function runOne(e: Entry): Promise<ReleaseFailure | undefined> {
  try {
    await e.release();
    return undefined;
  } catch (err) {
    return { what: e.what, error: coerceError(err) };
  }
}
