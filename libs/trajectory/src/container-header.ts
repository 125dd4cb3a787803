/**
 * Parses a container file header (magic, metadata map<bytes>, 16-byte sync) with every declared count
 * and length checked against the bytes present, so a header claiming a billion map entries or a
 * gigabyte key fails at once instead of looping or allocating.
 */
import { AvroBoundsError, NEED_MORE, readLong, readSize } from "./avro-varint.ts";
import { MAGIC, SYNC_BYTES, type ContainerHeader } from "./container-format.ts";

export type HeaderParse = { header: ContainerHeader; offset: number } | { needMore: true };

/**
 * The header starting at 0 of `buf`, or `{ needMore }` when `buf` ends inside it (the caller reads more,
 * up to its header limit). `complete` says no more bytes will come: running out then is an error.
 */
export function parseContainerHeader(buf: Buffer, complete: boolean): HeaderParse {
  const end = buf.length;
  const more = (): HeaderParse => {
    if (complete) throw new AvroBoundsError("file ends inside the header");
    return { needMore: true };
  };
  if (end < MAGIC.length) return more();
  if (!buf.subarray(0, MAGIC.length).equals(MAGIC)) throw new AvroBoundsError("not an Avro container file (bad magic)");
  let pos = MAGIC.length;
  // Null-prototype: keys come from the file and must not reach Object.prototype.
  const meta = Object.create(null) as Record<string, Buffer>;
  for (;;) {
    const count = readLong(buf, pos, end);
    if (count.offset === NEED_MORE) return more();
    pos = count.offset;
    let n = count.value;
    if (n === 0) break;
    if (n < 0) {
      n = -n;
      const size = readSize(buf, pos, end, "header map block size", Number.MAX_SAFE_INTEGER);
      if (size.offset === NEED_MORE) return more();
      pos = size.offset;
    }
    // Each entry takes at least two bytes (key length, value length); more entries than that cannot be real.
    if (n > (end - pos) / 2) {
      if (!complete && n <= Number.MAX_SAFE_INTEGER && n * 2 <= 64 * 1024 * 1024) return more();
      throw new AvroBoundsError(`header declares ${n} metadata entries, more than its ${end - pos} remaining bytes can hold`);
    }
    for (let i = 0; i < n; i++) {
      const kl = readSize(buf, pos, end, "metadata key length", complete ? end - pos : Number.MAX_SAFE_INTEGER);
      if (kl.offset === NEED_MORE || kl.offset + kl.value > end) return more();
      const key = buf.toString("utf8", kl.offset, kl.offset + kl.value);
      pos = kl.offset + kl.value;
      const vl = readSize(buf, pos, end, "metadata value length", complete ? end - pos : Number.MAX_SAFE_INTEGER);
      if (vl.offset === NEED_MORE || vl.offset + vl.value > end) return more();
      meta[key] = Buffer.from(buf.subarray(vl.offset, vl.offset + vl.value));
      pos = vl.offset + vl.value;
    }
  }
  if (end - pos < SYNC_BYTES) return more();
  const sync = Buffer.from(buf.subarray(pos, pos + SYNC_BYTES));
  return { header: { magic: MAGIC, meta, sync }, offset: pos + SYNC_BYTES };
}
