/**
 * The device's in-memory file system: what `adb push`/`pull` (sync service) and the shell see.
 * Directories are explicit entries; writing a file creates its parent directories (like adb push).
 */

export interface FileStat {
  mode: number;
  size: number;
  mtimeSec: number;
}
export interface DirEntry extends FileStat {
  name: string;
}

const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const S_IFMT = 0o170000;

export interface SavedFsNode {
  path: string;
  dir: boolean;
  mode: number;
  mtimeSec: number;
  data: Uint8Array;
}

interface Node {
  dir: boolean;
  mode: number;
  mtimeSec: number;
  data: Uint8Array;
}

/** The primary shared storage, which `/sdcard` and `/storage/self/primary` lead to (symbolic links on a device). */
export const PRIMARY_STORAGE = "/storage/emulated/0";

/**
 * `/`-rooted, without `.`, `..` and empty segments; `/sdcard/…` and `/storage/self/primary/…` become
 * `/storage/emulated/0/…`, as the device's links resolve (AndroidWorld writes through one and checks the other).
 * `resolveLinks` false: the absolute name as written (what Java's getAbsolutePath prints).
 */
export function normalizePath(path: string, resolveLinks = true): string {
  const parts: string[] = [];
  for (const p of path.split("/")) {
    if (p === "" || p === ".") continue;
    if (p === "..") parts.pop();
    else parts.push(p);
    if (!resolveLinks) continue;
    if (parts.length === 1 && parts[0] === "sdcard") parts.splice(0, 1, "storage", "emulated", "0");
    if (parts.length === 3 && parts[0] === "storage" && parts[1] === "self" && parts[2] === "primary") parts.splice(1, 2, "emulated", "0");
  }
  return "/" + parts.join("/");
}

function parentOf(path: string): string {
  const i = path.lastIndexOf("/");
  return i <= 0 ? "/" : path.slice(0, i);
}

export class SimFileSystem {
  private readonly nodes = new Map<string, Node>();

  constructor(private readonly nowSec: () => number) {
    for (const d of ["/", "/data", "/data/local", "/data/local/tmp", "/data/app", "/data/data", "/system", "/system/bin", "/storage", "/storage/emulated", PRIMARY_STORAGE, "/storage/self", "/proc", "/dev", "/etc", "/vendor"]) {
      this.nodes.set(d, { dir: true, mode: S_IFDIR | 0o771, mtimeSec: nowSec(), data: new Uint8Array(0) });
    }
    // The link's own entry, so that `/` lists it; every path through it resolves to the primary storage.
    this.nodes.set("/sdcard", { dir: true, mode: S_IFDIR | 0o771, mtimeSec: nowSec(), data: new Uint8Array(0) });
    for (const d of ["Download", "DCIM", "Pictures", "Movies", "Music", "Documents", "Android", "Alarms", "Notifications", "Podcasts", "Ringtones"]) {
      this.nodes.set(`${PRIMARY_STORAGE}/${d}`, { dir: true, mode: S_IFDIR | 0o771, mtimeSec: nowSec(), data: new Uint8Array(0) });
    }
    this.write("/dev/null", new Uint8Array(0), 0o666, nowSec());
  }

  stat(path: string): FileStat | undefined {
    const n = this.nodes.get(normalizePath(path));
    return n && { mode: n.mode, size: n.dir ? 4096 : n.data.length, mtimeSec: n.mtimeSec };
  }

  isDirectory(path: string): boolean {
    return this.nodes.get(normalizePath(path))?.dir ?? false;
  }

  list(dir: string): DirEntry[] | undefined {
    const d = normalizePath(dir);
    const node = this.nodes.get(d);
    if (!node?.dir) return undefined;
    const prefix = d === "/" ? "/" : d + "/";
    const out: DirEntry[] = [];
    for (const [path, n] of this.nodes) {
      if (path === d || !path.startsWith(prefix)) continue;
      const name = path.slice(prefix.length);
      if (name.includes("/")) continue;
      out.push({ name, mode: n.mode, size: n.dir ? 4096 : n.data.length, mtimeSec: n.mtimeSec });
    }
    return out.sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  read(path: string): Uint8Array | undefined {
    const n = this.nodes.get(normalizePath(path));
    return n && !n.dir ? n.data : undefined;
  }

  /** Writes a regular file; `mode` may be bare permission bits or include the file type (as sync SEND sends). */
  write(path: string, data: Uint8Array, mode: number, mtimeSec: number): void {
    const p = normalizePath(path);
    this.mkdirs(parentOf(p));
    const perm = mode & ~S_IFMT & 0o7777;
    this.nodes.set(p, { dir: false, mode: S_IFREG | (perm || 0o644), mtimeSec, data: new Uint8Array(data) });
  }

  mkdirs(path: string): void {
    const p = normalizePath(path);
    if (this.nodes.get(p)?.dir) return;
    if (p !== "/") this.mkdirs(parentOf(p));
    this.nodes.set(p, { dir: true, mode: S_IFDIR | 0o771, mtimeSec: this.nowSec(), data: new Uint8Array(0) });
  }

  /** Every node (path, directory?, mode, mtime, contents) for a device snapshot; contents are shared, never mutated in place. */
  saveState(): SavedFsNode[] {
    return [...this.nodes].map(([path, n]) => ({ path, dir: n.dir, mode: n.mode, mtimeSec: n.mtimeSec, data: n.data }));
  }

  restoreState(nodes: readonly SavedFsNode[]): void {
    this.nodes.clear();
    // Snapshots from before the storage links kept `/sdcard/…` apart: those files land where the link leads.
    for (const n of nodes) {
      const key = n.path === "/sdcard" ? n.path : normalizePath(n.path);
      if (key !== n.path && this.nodes.has(key)) continue;
      this.nodes.set(key, { dir: n.dir, mode: n.mode, mtimeSec: n.mtimeSec, data: n.data });
    }
  }

  /** The node at `path` and everything below it, parents before their children (cp -r, chmod -R). */
  walk(path: string): SavedFsNode[] {
    const p = normalizePath(path);
    const prefix = p === "/" ? "/" : p + "/";
    const out: SavedFsNode[] = [];
    for (const [key, n] of this.nodes) if (key === p || key.startsWith(prefix)) out.push({ path: key, dir: n.dir, mode: n.mode, mtimeSec: n.mtimeSec, data: n.data });
    return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  /** Creates one directory; its parent must exist. */
  mkdir(path: string, perm = 0o771, mtimeSec = this.nowSec()): "ok" | "exists" | "no-parent" | "parent-not-dir" {
    const p = normalizePath(path);
    if (this.nodes.has(p)) return "exists";
    const parent = this.nodes.get(parentOf(p));
    if (!parent) return "no-parent";
    if (!parent.dir) return "parent-not-dir";
    this.nodes.set(p, { dir: true, mode: S_IFDIR | (perm & 0o7777), mtimeSec, data: new Uint8Array(0) });
    return "ok";
  }

  /** Sets the permission bits (the type bits stay); false when absent. */
  setMode(path: string, perm: number): boolean {
    const n = this.nodes.get(normalizePath(path));
    if (!n) return false;
    n.mode = (n.mode & S_IFMT) | (perm & 0o7777);
    return true;
  }

  setMtime(path: string, mtimeSec: number): boolean {
    const n = this.nodes.get(normalizePath(path));
    if (!n) return false;
    n.mtimeSec = mtimeSec;
    return true;
  }

  /** Moves a node and everything below it to `to` (which must not exist; its parent must). */
  rename(from: string, to: string): boolean {
    const src = normalizePath(from);
    const dst = normalizePath(to);
    if (!this.nodes.has(src) || this.nodes.has(dst) || src === "/") return false;
    if (dst.startsWith(src + "/")) return false;
    for (const n of this.walk(src)) {
      const node = this.nodes.get(n.path)!;
      this.nodes.delete(n.path);
      this.nodes.set(dst + n.path.slice(src.length), node);
    }
    return true;
  }

  /** Removes a file, or a directory with everything below it when `recursive`. Returns false if absent. */
  remove(path: string, recursive = false): boolean | "is-directory" {
    const p = normalizePath(path);
    const n = this.nodes.get(p);
    if (!n) return false;
    if (n.dir) {
      if (!recursive) return "is-directory";
      for (const key of [...this.nodes.keys()]) if (key.startsWith(p + "/")) this.nodes.delete(key);
    }
    if (p !== "/") this.nodes.delete(p);
    return true;
  }
}
