/**
 * A BullMQ Worker that takes a burst of waiting jobs in one round trip instead of one round trip per job.
 *
 * BullMQ's fetch loop asks Redis for one job, waits for the answer, then asks for the next: a host with 250
 * free devices and 250 waiting jobs (a campaign starting, episodes ending together) spends 250 round trips,
 * each also waiting for its turn on a busy event loop, before its last device starts; with Redis across a
 * network it is 250 × the RTT. Here, when a fetch finds a job and the Worker has room for more, the rest of
 * the room is asked for at once (the same BullMQ move-to-active call, one per job, sent together), and the loop's
 * next requests are answered from those. Each job keeps the lock token it was fetched with, as BullMQ's own
 * fetches do. Jobs fetched but not handed to the loop (the Worker paused, closing, or its concurrency
 * lowered meanwhile) are given back to the queue at once rather than left to stall. (BullMQ sets its wake-up
 * marker again with every job it moves to active, so jobs beyond this Worker's room wake the next one.)
 *
 * It hooks BullMQ's private `_getNextJob` (v6); a BullMQ without it gets its own one-at-a-time fetch.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- mirrors BullMQ's own generic defaults */
import { Worker, type Job, type Processor, type WorkerOptions } from "bullmq";

/** Most jobs asked for at once (a bound on one burst's replies, not on concurrency). */
export const MAX_FETCH_BURST = 64;

type NextJob = (token: string, opts?: { block?: boolean }) => Promise<Job | undefined>;
interface LoopInternals {
  _getNextJob?: NextJob;
  mainLoopQueue?: { numTotal(): number; add(p: Promise<undefined>): void } | null;
  closing?: Promise<void>;
}

export interface BurstFetchHooks {
  /** A fetch found jobs waiting and `jobs` more were taken at once (for a metric). */
  onBurst?(jobs: number): void;
}

export class BurstFetchWorker<D = any, R = any> extends Worker<D, R> {
  private readonly fetched: Job[] = [];
  private bursts = 0;

  constructor(name: string, processor: Processor<D, R>, opts: WorkerOptions, private readonly hooks: BurstFetchHooks = {}) {
    super(name, processor, opts);
    // Before the loop's first fetch (run() waits for the connection first, even with autorun).
    this.installBurstFetch();
  }

  private installBurstFetch(): void {
    const internals = this as unknown as LoopInternals;
    const fetchOne = internals._getNextJob;
    if (typeof fetchOne !== "function") return;
    internals._getNextJob = async (token, opts) => {
      const ready = this.fetched.shift();
      if (ready) return ready;
      const job = await fetchOne.call(this, token, opts);
      if (job) await this.fetchRoom(internals);
      return job;
    };
  }

  /** Asks for as many jobs as the loop has room for beyond the one it is fetching now. */
  private async fetchRoom(internals: LoopInternals): Promise<void> {
    // The loop counts the fetch in progress among its entries, so its room is what is left after it.
    const entries = internals.mainLoopQueue?.numTotal() ?? this.concurrency;
    const room = Math.min(MAX_FETCH_BURST, this.concurrency - entries - this.fetched.length);
    if (room < 1 || this.stopping()) return;
    const burst = ++this.bursts;
    let failure: unknown;
    const replies = await Promise.all(
      Array.from({ length: room }, (_, i) =>
        this.moveToActive(`${this.id}:burst-${burst}-${i}`, this.opts.name).catch((e: unknown) => {
          failure ??= e;
          return undefined;
        }),
      ),
    );
    const taken = replies.filter((j): j is Job => j !== undefined);
    this.fetched.push(...taken);
    if (taken.length > 0) this.hooks.onBurst?.(taken.length);
    // The job in hand still runs; the failure is reported once, as BullMQ reports its own fetch errors.
    if (failure !== undefined) this.emit("error", failure instanceof Error ? failure : new Error(String(failure)));
    if (this.stopping()) await this.giveBack();
  }

  /**
   * BullMQ's fetch loop, once it runs `concurrency` jobs, waits for one of them to end before it looks at
   * `concurrency` again: raised meanwhile, the new room would stay unused for a whole job. An already-resolved
   * empty entry in the loop's queue ends that wait at once, so the loop fetches up to the new concurrency now.
   * (Without BullMQ's loop queue, v5–v6, this does nothing and the loop catches up when a job ends.)
   */
  wakeFetchLoop(): void {
    (this as unknown as LoopInternals).mainLoopQueue?.add(Promise.resolve(undefined));
  }

  private stopping(): boolean {
    return this.isPaused() || (this as unknown as LoopInternals).closing !== undefined;
  }

  /** Returns jobs fetched but not handed to the loop to the queue, keeping their attempts. */
  private async giveBack(): Promise<void> {
    const jobs = this.fetched.splice(0);
    await Promise.all(jobs.map((j) => (j.token ? j.moveToDelayed(Date.now(), j.token).catch(() => undefined) : undefined)));
  }

  override set concurrency(n: number) {
    const lowered = n < super.concurrency;
    super.concurrency = n;
    // BullMQ's constructor sets concurrency before this class's fields exist.
    const held = (this.fetched as Job[] | undefined)?.length ?? 0;
    // Fewer slots: fetched jobs could wait for one with nobody renewing their locks; let other workers take them.
    if (lowered && held > 0) void this.giveBack();
  }

  override get concurrency(): number {
    return super.concurrency;
  }

  override async pause(doNotWaitActive?: boolean): Promise<void> {
    const paused = super.pause(doNotWaitActive);
    await this.giveBack();
    await paused;
  }

  override async close(force?: boolean): Promise<void> {
    await this.giveBack();
    await super.close(force);
  }
}
