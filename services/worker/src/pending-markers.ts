/**
 * Pending markers: `<out>/.pending/<file name>.json` says that an episode file may be published and must be
 * settled against its claim (see episode-store.ts and commit-flow.ts). One is written before each publish and
 * removed once settled, so a host writes and removes one per episode.
 *
 * Creating a file is the dear part (a new inode: 200-300 µs of kernel time on some ext4 disks, against
 * ~10 µs to rewrite or rename an existing one), so a marker this process settles is not deleted but moved
 * aside as a blank (`<out>/.pending/.free/<process>-<n>`, hidden from the listing) and the next marker is
 * written into a blank and renamed into place. The listing, the names and the contents are as before: a marker
 * appears whole under its name or not at all. A blank holds an old marker's text; the new one is padded with
 * spaces to the blank's length (JSON allows trailing whitespace), so no old byte survives. Markers of other
 * processes are deleted as before. Blanks left by a process that ended are swept once old.
 */
import { randomBytes } from "node:crypto";
import { readdir, readFile, rename, rm, stat, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { errnoCode } from "@farm/errors";
import { inFolder } from "@farm/trajectory";

/** What a pending marker remembers: which episode the file at `file` belongs to. */
export interface PendingMarker {
  campaignId: string;
  episodeIndex: number;
  file: string;
  atMs: number;
}

const PENDING_DIR = ".pending";
const BLANK_DIR = ".free";
/** Blanks kept for reuse: about the most commits one host has in flight at once. */
const MAX_BLANKS = 1024;

interface Blank {
  path: string;
  bytes: number;
}

export class PendingMarkers {
  /** Files an attempt in this process is committing right now: the pending resolver leaves them alone. */
  private readonly committing = new Set<string>();
  private readonly blanks: Blank[] = [];
  /** Markers this process wrote and has not settled, by episode file: the length of their text. */
  private readonly written = new Map<string, number>();
  private readonly blankPrefix = `${process.pid}-${randomBytes(4).toString("hex")}`;
  private blankSeq = 0;
  private closed = false;

  constructor(private readonly outDir: string) {}

  private get dir(): string {
    return path.join(this.outDir, PENDING_DIR);
  }

  private markerPath(file: string): string {
    return path.join(this.dir, `${path.basename(file)}.json`);
  }

  /** Remembers, before publishing, that `file` may appear and must be settled against the claim. */
  async mark(m: Omit<PendingMarker, "atMs">): Promise<void> {
    const target = this.markerPath(m.file);
    const body = JSON.stringify({ ...m, atMs: Date.now() });
    const blank = this.blanks.pop();
    if (blank) {
      const text = body.padEnd(blank.bytes);
      try {
        await writeFile(blank.path, text, { flag: "r+" });
        await rename(blank.path, target);
        this.written.set(m.file, Buffer.byteLength(text));
        return;
      } catch (e) {
        if (errnoCode(e) !== "ENOENT") throw e; // swept meanwhile: write a new one
      }
    }
    await inFolder(this.dir, () => writeFile(target, body));
    this.written.set(m.file, Buffer.byteLength(body));
  }

  /** Removes the marker of `file` (ours becomes a blank for the next one). */
  async clear(file: string): Promise<void> {
    const marker = this.markerPath(file);
    const bytes = this.written.get(file);
    this.written.delete(file);
    if (bytes !== undefined && !this.closed && this.blanks.length < MAX_BLANKS) {
      const blank = { path: path.join(this.dir, BLANK_DIR, `${this.blankPrefix}-${++this.blankSeq}`), bytes };
      try {
        await inFolder(path.dirname(blank.path), () => rename(marker, blank.path));
        this.blanks.push(blank);
        return;
      } catch (e) {
        if (errnoCode(e) === "ENOENT") return; // settled by another process already
        throw e;
      }
    }
    await unlink(marker).catch((e: unknown) => {
      if (errnoCode(e) !== "ENOENT") throw e;
    });
  }

  /** Marks `file` as being committed by this process until `done()` (see list). */
  beginCommit(file: string): () => void {
    this.committing.add(file);
    return () => this.committing.delete(file);
  }

  /** Markers left by attempts that are not running in this process any more (crashed, or lost their lock). */
  async list(): Promise<PendingMarker[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (e) {
      if (errnoCode(e) === "ENOENT") return [];
      throw e;
    }
    const out: PendingMarker[] = [];
    for (const n of names.filter((x) => x.endsWith(".json"))) {
      try {
        const m = JSON.parse(await readFile(path.join(this.dir, n), "utf8")) as PendingMarker;
        if (typeof m.file === "string" && typeof m.campaignId === "string" && Number.isSafeInteger(m.episodeIndex)) {
          if (!this.committing.has(m.file)) out.push(m);
        }
        else await rm(path.join(this.dir, n), { force: true });
      } catch (e) {
        if (errnoCode(e) !== "ENOENT") await rm(path.join(this.dir, n), { force: true }); // torn write: the publish never happened
      }
    }
    return out;
  }

  /** Removes this process's blanks (a clean exit leaves nothing behind); markers cleared later are deleted. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.blanks.splice(0).map((b) => unlink(b.path).catch(() => undefined)));
  }

  /** Removes blanks older than `olderThanMs` that this process does not hold (their process ended). Returns how many. */
  async sweepBlanks(olderThanMs: number): Promise<number> {
    const dir = path.join(this.dir, BLANK_DIR);
    const ours = new Set(this.blanks.map((b) => b.path));
    let removed = 0;
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      const blank = path.join(dir, name);
      if (ours.has(blank)) continue;
      try {
        if (Date.now() - (await stat(blank)).mtimeMs < olderThanMs) continue;
        await unlink(blank);
        removed++;
      } catch (e) {
        if (errnoCode(e) !== "ENOENT") throw e;
      }
    }
    return removed;
  }
}
