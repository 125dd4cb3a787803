/**
 * The host's local device pool: which of this worker's devices may take the next episode job.
 *
 * One BullMQ Worker per host fetches jobs for all devices (host-job-pump.ts); the pool hands each fetched
 * job to an idle device. A device in the pool is `idle` or `busy`; a device that pauses (recovery), is
 * leased out (a remote environment) or leaves (unbound, retired) takes no new job. `capacity` (devices
 * that may take jobs) drives the Worker's concurrency, so Redis connections do not grow with devices.
 *
 * Retries prefer another device: a job that failed on a device is handed to a different idle device
 * when there is one (remembered for a bounded number of jobs).
 *
 *   const pool = new DevicePool<Member>({ onCapacity: (n) => pump.setCapacity(n) });
 *   pool.add(member); const m = await pool.acquire(jobId, signal); … pool.release(m);
 *   const lease = pool.lease(); … lease?.release();
 */
import { FarmError } from "@farm/errors";

/** What the pool needs of a device. */
export interface PoolMember {
  readonly serial: string;
}

/** An idle device taken out of the campaign pool (e.g. for a remote environment) until `release()`. */
export interface DeviceLease {
  readonly serial: string;
  /** Gives the device back to the pool (idempotent). */
  release(): void;
}

type MemberState = "idle" | "busy" | "paused" | "leased";

interface Entry<M> {
  member: M;
  state: MemberState;
  /** Paused while busy: stays paused once its job ends. */
  pauseAfterJob: boolean;
  /** Resolved when the running job ends (for `remove` that waits). */
  idleWaiters: (() => void)[];
}

interface Waiter<M> {
  jobId: string | undefined;
  resolve(m: M): void;
  reject(e: Error): void;
}

/** How many jobs' last failing device is remembered (bounded memory on a long-running host). */
const FAILED_ON_LIMIT = 10_000;

export class PoolClosedError extends FarmError<"pool_closed"> {
  /** The job goes back to the queue for another host (this one is draining): retryable. */
  constructor() {
    super("pool_closed", "device pool closed: no device will take this job", { retryable: true });
    this.name = "PoolClosedError";
  }
}

export interface DevicePoolOptions {
  /** Told whenever the number of devices that may take jobs changes. */
  onCapacity?(capacity: number): void;
}

export class DevicePool<M extends PoolMember> {
  private readonly entries = new Map<string, Entry<M>>();
  private readonly waiters: Waiter<M>[] = [];
  private readonly failedOn = new Map<string, string>();
  private lastCapacity = -1;
  private closed = false;

  constructor(private readonly opts: DevicePoolOptions = {}) {}

  /** Devices that may take jobs (idle or busy, not paused, leased or removed). */
  get capacity(): number {
    let n = 0;
    for (const e of this.entries.values()) if ((e.state === "idle" || e.state === "busy") && !e.pauseAfterJob) n++;
    return n;
  }

  /** Serial → state, for tests and the device gauge. */
  states(): Record<string, MemberState> {
    return Object.fromEntries([...this.entries].map(([s, e]) => [s, e.state]));
  }

  has(serial: string): boolean {
    return this.entries.has(serial);
  }

  /** A device joins idle (replacing nothing: a serial already in the pool is an error). */
  add(member: M): void {
    if (this.entries.has(member.serial)) throw new Error(`device pool: ${member.serial} is in the pool already`);
    this.entries.set(member.serial, { member, state: "idle", pauseAfterJob: false, idleWaiters: [] });
    this.changed();
  }

  /**
   * The device takes no new job; resolves once its running job (if any) has ended. A leased device
   * leaves too (its lease's release() then does nothing).
   */
  remove(serial: string): Promise<void> {
    const e = this.entries.get(serial);
    if (!e) return Promise.resolve();
    let done = Promise.resolve();
    if (e.state === "busy") {
      done = new Promise<void>((r) => e.idleWaiters.push(r));
      this.orphans.set(e.member, e);
    }
    this.entries.delete(serial);
    this.changed();
    return done;
  }

  /** The device takes no new job until `resume` (its running job, if any, goes on). */
  pause(serial: string): void {
    const e = this.entries.get(serial);
    if (!e || e.state === "paused" || e.state === "leased") return;
    if (e.state === "busy") e.pauseAfterJob = true;
    else e.state = "paused";
    this.changed();
  }

  resume(serial: string): void {
    const e = this.entries.get(serial);
    if (!e) return;
    if (e.pauseAfterJob) e.pauseAfterJob = false;
    else if (e.state === "paused") e.state = "idle";
    else return;
    this.changed();
  }

  /** Takes an idle device out of the pool until the lease is released; undefined when none is idle. */
  lease(): DeviceLease | undefined {
    const e = [...this.entries.values()].find((x) => x.state === "idle");
    if (!e) return undefined;
    e.state = "leased";
    this.changed();
    let released = false;
    return {
      serial: e.member.serial,
      release: () => {
        if (released) return;
        released = true;
        if (this.entries.get(e.member.serial) !== e || e.state !== "leased") return;
        e.state = "idle";
        this.changed();
      },
    };
  }

  /** Remember that `jobId` failed on `serial`, so its retry prefers another device of this host. */
  noteFailure(jobId: string | undefined, serial: string): void {
    if (!jobId) return;
    this.failedOn.delete(jobId);
    this.failedOn.set(jobId, serial);
    if (this.failedOn.size > FAILED_ON_LIMIT) this.failedOn.delete(this.failedOn.keys().next().value!);
  }

  /**
   * An idle device for the job (not the one it last failed on, when another is idle); waits for one
   * when none is idle. Rejects when `signal` aborts or the pool closes.
   */
  acquire(jobId: string | undefined, signal?: AbortSignal): Promise<M> {
    if (this.closed) return Promise.reject(new PoolClosedError());
    const e = this.pick(jobId);
    if (e) return Promise.resolve(this.take(e, jobId));
    return new Promise<M>((resolve, reject) => {
      const w: Waiter<M> = { jobId, resolve, reject };
      this.waiters.push(w);
      signal?.addEventListener(
        "abort",
        () => {
          const i = this.waiters.indexOf(w);
          if (i >= 0) this.waiters.splice(i, 1);
          reject(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason ?? "aborted")));
        },
        { once: true },
      );
    });
  }

  /** The device's job ended: it is idle again (or paused, if asked meanwhile). */
  release(member: M): void {
    const e = this.entries.get(member.serial);
    // Removed meanwhile: its remover waits for this.
    const orphan = e?.member === member ? undefined : this.orphans.get(member);
    if (orphan) {
      this.orphans.delete(member);
      for (const r of orphan.idleWaiters.splice(0)) r();
      return;
    }
    if (!e || e.member !== member || e.state !== "busy") return;
    e.state = e.pauseAfterJob ? "paused" : "idle";
    e.pauseAfterJob = false;
    for (const r of e.idleWaiters.splice(0)) r();
    this.changed();
  }

  /** No more jobs: waiting acquires reject with PoolClosedError. */
  close(): void {
    this.closed = true;
    for (const w of this.waiters.splice(0)) w.reject(new PoolClosedError());
  }

  /** Busy entries removed from the map, so `release` still finds whom to tell. */
  private readonly orphans = new Map<M, Entry<M>>();

  private pick(jobId: string | undefined): Entry<M> | undefined {
    const avoid = jobId ? this.failedOn.get(jobId) : undefined;
    let fallback: Entry<M> | undefined;
    for (const e of this.entries.values()) {
      if (e.state !== "idle") continue;
      if (e.member.serial !== avoid) return e;
      fallback = e;
    }
    return fallback;
  }

  private take(e: Entry<M>, jobId: string | undefined): M {
    e.state = "busy";
    if (jobId) this.failedOn.delete(jobId);
    return e.member;
  }

  /** Hands idle devices to waiting jobs, then reports capacity. */
  private changed(): void {
    while (this.waiters.length > 0) {
      const e = this.pick(this.waiters[0]!.jobId);
      if (!e) break;
      const w = this.waiters.shift()!;
      w.resolve(this.take(e, w.jobId));
    }
    const c = this.capacity;
    if (c !== this.lastCapacity) {
      this.lastCapacity = c;
      this.opts.onCapacity?.(c);
    }
  }
}
