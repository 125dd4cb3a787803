/**
 * A small pool of frame threads (frame-thread.ts) shared by a driver's devices: screen captures and frame
 * encodes run there, off the event loop that drives actions, steps and logcat. Started on first use;
 * the threads are unref'd (they never keep the process alive) and stopped by `close()`. A thread that dies
 * fails its requests as `internal_error` and is replaced on the next request.
 */
import os from "node:os";
import { Worker } from "node:worker_threads";
import type { FrameSpec } from "@farm/frames";
import type { FrameThreadReply, FrameThreadRequest } from "./frame-thread.ts";
import { CaptureError } from "./framebuffer-socket.ts";
import { removeRegionFiles, sweepStaleRegions } from "./grpc/shared-frames.ts";
import type { StepStatus } from "./types.ts";
import { FarmError } from "@farm/errors";

export interface CaptureReply {
  width: number;
  height: number;
  rgba?: Uint8Array;
  rgb?: Uint8Array;
}

interface Pending {
  captured: { resolve(v: CaptureReply): void; reject(e: Error): void };
  encoded?: { resolve(v: Uint8Array): void; reject(e: Error): void };
  thread: Worker;
}

const THREAD_URL = new URL("./frame-thread.ts", import.meta.url);
const TSX_API = import.meta.resolve("tsx/esm/api");

/**
 * Threads start from this bootstrap, which registers tsx in the thread (loader hooks are per thread) so the
 * TypeScript sources load under `node --import tsx` and under the `farm` command alike.
 */
const BOOTSTRAP = `
const { workerData } = require("node:worker_threads");
(async () => {
  (await import(workerData.tsx)).register();
  await import(workerData.url);
})();
`;

/** Frame threads of this process not closed yet; a process that exits without closing its drivers still removes their region files. */
const liveThreadIds = new Set<number>();
process.once("exit", () => removeRegionFiles([...liveThreadIds]));

/** Threads per driver: encoding is CPU-bound, and one thread per core is the most that helps. */
export const DEFAULT_FRAME_THREADS = Math.max(1, Math.min(2, os.availableParallelism() - 1));

export class FrameThreads {
  private readonly threads: Worker[] = [];
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private turn = 0;
  private closed = false;
  /** Every thread this pool started (replaced ones too): their region files are removed on close. */
  private readonly started: number[] = [];

  constructor(
    private readonly size = DEFAULT_FRAME_THREADS,
    /** An endpoint whose frames cannot come through shared memory (they come in the answer instead). */
    private readonly onSharedFramesOff: (endpoint: string, reason: string) => void = () => undefined,
  ) {}

  private thread(): Worker {
    const i = this.turn++ % this.size;
    const t = this.threads[i];
    if (t) return t;
    if (this.started.length === 0) sweepStaleRegions();
    const w = new Worker(BOOTSTRAP, { eval: true, workerData: { url: THREAD_URL.href, tsx: TSX_API } });
    w.unref();
    this.started.push(w.threadId);
    liveThreadIds.add(w.threadId);
    w.on("message", (r: FrameThreadReply) => this.onReply(r));
    const dead = (why: string) => {
      if (this.threads[i] === w) this.threads[i] = undefined as unknown as Worker;
      for (const [id, p] of this.pending) {
        if (p.thread !== w) continue;
        this.pending.delete(id);
        const err = new CaptureError("internal_error", `frame thread stopped: ${why}`);
        p.captured.reject(err);
        p.encoded?.reject(err);
      }
    };
    w.on("error", (e) => dead(e.message));
    w.on("exit", (code) => dead(`exit code ${code}`));
    this.threads[i] = w;
    return w;
  }

  private onReply(r: FrameThreadReply): void {
    if (r.kind === "shared-frames-off") return this.onSharedFramesOff(r.endpoint, r.reason);
    const p = this.pending.get(r.id);
    if (!p) return;
    if (r.kind === "captured") {
      p.captured.resolve({ width: r.width, height: r.height, ...(r.rgba ? { rgba: r.rgba } : {}), ...(r.rgb ? { rgb: r.rgb } : {}) });
      if (!p.encoded) this.pending.delete(r.id);
    } else if (r.kind === "encoded") {
      p.encoded?.resolve(r.bytes);
      this.pending.delete(r.id);
    } else {
      const err = new CaptureError(r.status as StepStatus, r.message);
      if (r.stage === "capture") p.captured.reject(err);
      p.encoded?.reject(err);
      this.pending.delete(r.id);
    }
  }

  /**
   * Captures `serial`'s screen through the adb server; `captured` settles when the pixels are in (with them
   * when `raw`), `encoded` (only with a spec) when the frame is encoded. Both reject with CaptureError.
   */
  capture(req: Omit<FrameThreadRequest, "id">): { captured: Promise<CaptureReply>; encoded?: Promise<Uint8Array> } {
    if (this.closed) {
      const err = new CaptureError("internal_error", "the driver is closed");
      return { captured: Promise.reject(err), ...(req.spec ? { encoded: Promise.reject(err) } : {}) };
    }
    const id = this.nextId++;
    const thread = this.thread();
    const entry: Partial<Pending> & { thread: Worker } = { thread };
    const captured = new Promise<CaptureReply>((resolve, reject) => (entry.captured = { resolve, reject }));
    let encoded: Promise<Uint8Array> | undefined;
    if (req.spec) {
      encoded = new Promise<Uint8Array>((resolve, reject) => (entry.encoded = { resolve, reject }));
      // Whoever takes the frame may drop the encode (a failed step); never an unhandled rejection.
      encoded.catch(() => undefined);
    }
    this.pending.set(id, entry as Pending);
    thread.postMessage({ ...req, id } satisfies FrameThreadRequest);
    return { captured, ...(encoded ? { encoded } : {}) };
  }

  async close(): Promise<void> {
    this.closed = true;
    const ts = this.threads.filter(Boolean);
    this.threads.length = 0;
    await Promise.all(ts.map((t) => t.terminate()));
    // The threads' shared frame regions (files in /dev/shm) go with them.
    removeRegionFiles(this.started);
    for (const id of this.started) liveThreadIds.delete(id);
  }
}

export type { FrameSpec };
