/**
 * Frames through shared memory, client side: the emulator's MMAP image transport. A getScreenshot request
 * names a region (a file in /dev/shm, so memory, not disk) and the emulator writes the pixels there instead
 * of into the answer, which saves serializing, sending and parsing 6-8 MB per 1080x1920 frame. Only for an
 * emulator on this host (a loopback endpoint); one that cannot reach the file (another container) answers
 * with neither pixels nor transport, and the caller goes back to pixels in the answer for that endpoint.
 *
 * Regions are files named `farm-frames-<pid>-<thread>-<n>`, one per capture in flight, reused, grown when a
 * frame needs more; `removeRegionFiles` deletes a thread's files, and `sweepStaleRegions` those of processes
 * that died without doing so.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { threadId } from "node:worker_threads";
import { processAlive } from "@farm/emulator-grpc";

const PREFIX = "farm-frames-";
/** Regions one thread keeps at most; captures beyond that take pixels in the answer. */
const MAX_REGIONS = 8;

/** Where regions live: /dev/shm (tmpfs) when there is one, else the temp folder (still only page cache). */
export function regionDir(): string {
  try {
    if (fs.statSync("/dev/shm").isDirectory()) return "/dev/shm";
  } catch {
    // no /dev/shm (not Linux)
  }
  return os.tmpdir();
}

export interface Region {
  readonly file: string;
  /** The handle the emulator opens: a file URI. */
  readonly handle: string;
  fd: number;
  size: number;
  /** Where the region is read into: reused from frame to frame (a fresh 6-8 MB buffer per frame costs more in GC than the read). */
  buf: Buffer;
}

const LOOPBACK = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\]|::1|localhost):\d{1,5}$/i;

/** Whether an endpoint address is on this host's loopback (the only place a shared file is shared). */
export function isLoopbackAddress(address: string): boolean {
  return LOOPBACK.test(address);
}

/** This thread's regions. */
export class FrameRegions {
  private readonly free: Region[] = [];
  /** Regions open now (free or in use), and the number the next one gets. */
  private live = 0;
  private next = 0;

  constructor(private readonly dir = regionDir()) {}

  /**
   * A region of at least `bytes` bytes for one capture; undefined when this thread has too many in use or the
   * folder refuses (full, read-only): the capture then takes pixels in the answer.
   */
  acquire(bytes: number): Region | undefined {
    let r = this.free.pop();
    try {
      if (!r) {
        if (this.live >= MAX_REGIONS) return undefined;
        const file = path.join(this.dir, `${PREFIX}${process.pid}-${threadId}-${this.next++}`);
        const fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_NOFOLLOW, 0o600);
        this.live++;
        r = { file, handle: `file://${file}`, fd, size: 0, buf: Buffer.alloc(0) };
      }
      if (r.size < bytes) {
        fs.ftruncateSync(r.fd, bytes);
        r.size = bytes;
      }
      return r;
    } catch {
      if (r) this.discard(r);
      return undefined;
    }
  }

  release(r: Region): void {
    if (r.fd >= 0) this.free.push(r);
  }

  /** Deletes a region that must not be reused (a call on it timed out: the emulator may still write it). */
  discard(r: Region): void {
    if (r.fd < 0) return;
    fs.closeSync(r.fd);
    r.fd = -1;
    unlinkQuietly(r.file);
    this.live--;
  }

  /** The first `bytes` bytes of a region, in its read buffer (valid until the region is released). */
  read(r: Region, bytes: number): Buffer {
    if (r.buf.byteLength < bytes) r.buf = Buffer.allocUnsafeSlow(r.size);
    const out = r.buf.subarray(0, bytes);
    for (let off = 0; off < bytes; ) {
      const n = fs.readSync(r.fd, out, off, bytes - off, off);
      if (n === 0) throw new Error(`shared frame region ${r.file} ended at ${off} of ${bytes} bytes`);
      off += n;
    }
    return out;
  }
}

/** Deletes the region files of the given threads of this process (after they stopped). */
export function removeRegionFiles(threadIds: number[], dir = regionDir()): void {
  if (threadIds.length === 0) return;
  const mine = threadIds.map((t) => `${PREFIX}${process.pid}-${t}-`);
  for (const name of listRegionFiles(dir)) {
    if (mine.some((p) => name.startsWith(p))) unlinkQuietly(path.join(dir, name));
  }
}

/** Deletes region files left by processes that are gone (killed before they could clean up). */
export function sweepStaleRegions(dir = regionDir()): void {
  for (const name of listRegionFiles(dir)) {
    const pid = Number(/^farm-frames-(\d{1,10})-/.exec(name)?.[1]);
    if (pid > 0 && pid !== process.pid && !processAlive(pid)) unlinkQuietly(path.join(dir, name));
  }
}

function listRegionFiles(dir: string): string[] {
  try {
    return fs.readdirSync(dir).filter((n) => n.startsWith(PREFIX));
  } catch {
    return [];
  }
}

function unlinkQuietly(file: string): void {
  try {
    fs.unlinkSync(file);
  } catch {
    // already gone
  }
}
