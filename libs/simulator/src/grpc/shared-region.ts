/**
 * The emulator's MMAP image transport, served side: when a getScreenshot request names a shared memory region
 * (ImageFormat.transport { channel: MMAP, handle }), the pixels are written into that region and the answer
 * carries no image bytes, only the transport echoed back. As with the emulator, the client creates and sizes
 * the region; a handle that cannot be opened, is not a regular file or is too small is not written, and the
 * answer then carries neither pixels nor transport (the client falls back to pixels in the answer).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const FILE_URI = "file://";
/** Where Linux keeps POSIX shared memory objects (`shm_open("/name")` is `/dev/shm/name`). */
const POSIX_SHM_DIR = "/dev/shm";

/** The file a handle names: `file:///abs/path`, or a POSIX shared memory name `/name`; undefined for anything else. */
export function regionPath(handle: string): string | undefined {
  if (handle.startsWith(FILE_URI)) {
    const p = decodeURIComponent(handle.slice(FILE_URI.length));
    return path.isAbsolute(p) ? path.normalize(p) : undefined;
  }
  // A POSIX name is one component after the slash.
  if (/^\/[^/\0]{1,250}$/.test(handle)) return path.join(POSIX_SHM_DIR, handle.slice(1));
  return undefined;
}

/**
 * Where regions may be (resolved once): shared memory and the temp folder, where clients create them. The emulator itself
 * writes wherever its (trusted, token-holding) client says; the simulator, often run as root on a developer's
 * machine, does not let a gRPC request overwrite files elsewhere.
 */
let allowed: string[] | undefined;
function allowedDirs(): string[] {
  if (allowed) return allowed;
  allowed = [];
  for (const d of [POSIX_SHM_DIR, os.tmpdir()]) {
    try {
      allowed.push(fs.realpathSync(d));
    } catch {
      // not on this system
    }
  }
  return allowed;
}

/**
 * Writes `bytes` at the start of the region `handle` names; false when it cannot (missing, outside shared
 * memory and the temp folder, not a regular file, smaller than the image). Never creates, truncates or follows
 * a symlink at the last component.
 */
export function writeRegion(handle: string, bytes: Uint8Array): boolean {
  const named = regionPath(handle);
  if (!named) return false;
  let fd: number | undefined;
  try {
    const file = path.join(fs.realpathSync(path.dirname(named)), path.basename(named));
    if (!allowedDirs().some((d) => file.startsWith(d + path.sep))) return false;
    fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_NOFOLLOW);
    const st = fs.fstatSync(fd);
    if (!st.isFile() || st.size < bytes.byteLength) return false;
    for (let off = 0; off < bytes.byteLength; ) off += fs.writeSync(fd, bytes, off, bytes.byteLength - off, off);
    return true;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
