import type { DeviceBackend, FileInfo } from "./backend.ts";
import { ByteReader } from "./byte-reader.ts";
import type { AdbStream } from "./stream.ts";

/** Sync protocol (`sync:`, §4.8): 4-byte id + u32 LE length + body requests, parsed as a byte stream. */

const MAX_PATH = 1024;
const MAX_DATA_CHUNK = 64 * 1024;
const S_IFMT = 0o170000;
const ENOENT = 2;

function id(tag: string, length: number): Buffer {
  const b = Buffer.alloc(8);
  b.write(tag, 0, "latin1");
  b.writeUInt32LE(length >>> 0, 4);
  return b;
}

function fail(message: string): Buffer {
  const m = Buffer.from(message, "utf8");
  return Buffer.concat([id("FAIL", m.length), m]);
}

function statV1(info: FileInfo | undefined): Buffer {
  const b = Buffer.alloc(16);
  b.write("STAT", 0, "latin1");
  if (info) {
    b.writeUInt32LE(info.mode >>> 0, 4);
    b.writeUInt32LE(Math.min(info.size, 0xffffffff) >>> 0, 8);
    b.writeUInt32LE(info.mtimeSec >>> 0, 12);
  }
  return b;
}

/** STA2 / LST2 reply: 4-byte tag + 68-byte struct; error ENOENT when missing. */
function statV2(tag: string, info: FileInfo | undefined, path: string): Buffer {
  const b = Buffer.alloc(72);
  b.write(tag, 0, "latin1");
  const s = b.subarray(4);
  if (!info) {
    s.writeUInt32LE(ENOENT, 0);
    return b;
  }
  s.writeBigUInt64LE(1n, 4); // dev
  s.writeBigUInt64LE(BigInt(inodeOf(path)), 12);
  s.writeUInt32LE(info.mode >>> 0, 20);
  s.writeUInt32LE(1, 24); // nlink
  s.writeUInt32LE(2000, 28); // uid shell
  s.writeUInt32LE(2000, 32); // gid shell
  s.writeBigUInt64LE(BigInt(Math.max(0, Math.floor(info.size))), 36);
  s.writeBigInt64LE(BigInt(info.mtimeSec), 44);
  s.writeBigInt64LE(BigInt(info.mtimeSec), 52);
  s.writeBigInt64LE(BigInt(info.mtimeSec), 60);
  return b;
}

function inodeOf(path: string): number {
  let h = 2166136261;
  for (let i = 0; i < path.length; i++) h = Math.imul(h ^ path.charCodeAt(i), 16777619);
  return h >>> 0;
}

function dent(entry: FileInfo & { name: string }): Buffer {
  const name = Buffer.from(entry.name, "utf8");
  const b = Buffer.alloc(20 + name.length);
  b.write("DENT", 0, "latin1");
  b.writeUInt32LE(entry.mode >>> 0, 4);
  b.writeUInt32LE(Math.min(entry.size, 0xffffffff) >>> 0, 8);
  b.writeUInt32LE(entry.mtimeSec >>> 0, 12);
  b.writeUInt32LE(name.length, 16);
  name.copy(b, 20);
  return b;
}

export function startSync(backend: DeviceBackend, stream: AdbStream): void {
  const input = new ByteReader();
  stream.onData = (d) => input.push(d);
  stream.signal.addEventListener("abort", () => input.end(), { once: true });
  void serveSync(backend, stream, input).catch(() => stream.close());
}

async function serveSync(backend: DeviceBackend, stream: AdbStream, input: ByteReader): Promise<void> {
  const fs = backend.fs;
  for (;;) {
    const header = await input.readExact(8);
    if (!header) return;
    const tag = header.toString("latin1", 0, 4);
    const length = header.readUInt32LE(4);
    if (tag === "QUIT") {
      stream.close();
      return;
    }
    if (length > MAX_PATH) {
      stream.write(fail(`path too long: ${length}`));
      stream.close();
      return;
    }
    const body = await input.readExact(length);
    if (!body) return;
    const path = body.toString("utf8");
    switch (tag) {
      case "STAT":
        stream.write(statV1(fs.stat(path)));
        break;
      case "STA2":
      case "LST2":
        stream.write(statV2(tag, fs.stat(path), path));
        break;
      case "LIST": {
        for (const entry of fs.list(path) ?? []) stream.write(dent(entry));
        const done = Buffer.alloc(20);
        done.write("DONE", 0, "latin1");
        stream.write(done);
        break;
      }
      case "RECV": {
        const info = fs.stat(path);
        const data = info && (info.mode & S_IFMT) !== 0o040000 ? fs.read(path) : undefined;
        if (!data) {
          stream.write(fail(info ? `'${path}': Is a directory` : `'${path}': No such file or directory`));
          break;
        }
        for (let off = 0; off < data.length; off += MAX_DATA_CHUNK) {
          const part = data.subarray(off, Math.min(off + MAX_DATA_CHUNK, data.length));
          stream.write(Buffer.concat([id("DATA", part.length), part]));
          await stream.drained(); // do not queue a whole large file at once
        }
        stream.write(id("DONE", 0));
        break;
      }
      case "SEND": {
        const ok = await receiveFile(backend, stream, input, path);
        if (!ok) return;
        break;
      }
      default:
        stream.write(fail(`unknown sync request '${tag}'`));
        stream.close();
        return;
    }
  }
}

/** SEND body `<path>,<mode>`, then DATA chunks and DONE(mtime); answers OKAY or FAIL. */
async function receiveFile(backend: DeviceBackend, stream: AdbStream, input: ByteReader, spec: string): Promise<boolean> {
  const comma = spec.lastIndexOf(",");
  const path = comma >= 0 ? spec.slice(0, comma) : spec;
  const mode = comma >= 0 ? Number.parseInt(spec.slice(comma + 1), 10) || 0o100644 : 0o100644;
  const parts: Buffer[] = [];
  for (;;) {
    const header = await input.readExact(8);
    if (!header) return false;
    const tag = header.toString("latin1", 0, 4);
    const value = header.readUInt32LE(4);
    if (tag === "DATA") {
      if (value > MAX_DATA_CHUNK) {
        stream.write(fail(`data chunk too large: ${value}`));
        stream.close();
        return false;
      }
      const data = await input.readExact(value);
      if (!data) return false;
      parts.push(data);
    } else if (tag === "DONE") {
      try {
        backend.fs.write(path, Buffer.concat(parts), mode, value);
        stream.write(id("OKAY", 0));
      } catch (e) {
        stream.write(fail(e instanceof Error ? e.message : String(e)));
      }
      return true;
    } else {
      stream.write(fail(`unexpected '${tag}' during SEND`));
      stream.close();
      return false;
    }
  }
}
