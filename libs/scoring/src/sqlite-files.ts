/**
 * A database pulled from a device as SQLite itself would read it (sqlite.org/fileformat2.html): the committed
 * frames of its write-ahead log (`-wal`) applied, or the pages of a hot rollback journal (`-journal`) put back;
 * then marked as a rollback-journal database (header bytes 18–19 = 1), so it opens from memory without a WAL.
 */

const WAL_MAGIC_LE = 0x377f0682;
const WAL_MAGIC_BE = 0x377f0683;
const WAL_HEADER = 32;
const WAL_FRAME_HEADER = 24;
const JOURNAL_MAGIC = [0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7];

function u32(b: Uint8Array, at: number): number {
  return ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0;
}

/** The page size of a database's header (offset 16; 1 means 65536), or undefined when it is not a database header. */
export function dbPageSize(db: Uint8Array): number | undefined {
  if (db.length < 100 || new TextDecoder().decode(db.subarray(0, 15)) !== "SQLite format 3") return undefined;
  const v = (db[16]! << 8) | db[17]!;
  const size = v === 1 ? 65536 : v;
  return size >= 512 && (size & (size - 1)) === 0 ? size : undefined;
}

/** SQLite's WAL checksum over `data` (a multiple of 8 bytes), continuing from `s`. */
function walChecksum(data: Uint8Array, bigEndian: boolean, s: [number, number]): [number, number] {
  let [s0, s1] = s;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  for (let i = 0; i + 8 <= data.length; i += 8) {
    s0 = (s0 + view.getUint32(i, !bigEndian) + s1) >>> 0;
    s1 = (s1 + view.getUint32(i + 4, !bigEndian) + s0) >>> 0;
  }
  return [s0, s1];
}

/** The database with the WAL's committed transactions applied (frames after the last valid commit frame are ignored, as SQLite's recovery does). */
export function applyWal(db: Uint8Array, wal: Uint8Array): Uint8Array {
  if (wal.length < WAL_HEADER) return db;
  const magic = u32(wal, 0);
  if (magic !== WAL_MAGIC_LE && magic !== WAL_MAGIC_BE) return db;
  const bigEndian = magic === WAL_MAGIC_BE;
  const pageSize = u32(wal, 8);
  if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) return db;
  let sum = walChecksum(wal.subarray(0, 24), bigEndian, [0, 0]);
  if (sum[0] !== u32(wal, 24) || sum[1] !== u32(wal, 28)) return db;
  const salt1 = u32(wal, 16);
  const salt2 = u32(wal, 20);
  const committed = new Map<number, Uint8Array>();
  let pending = new Map<number, Uint8Array>();
  let dbPages: number | undefined;
  for (let at = WAL_HEADER; at + WAL_FRAME_HEADER + pageSize <= wal.length; at += WAL_FRAME_HEADER + pageSize) {
    const pgno = u32(wal, at);
    const commitSize = u32(wal, at + 4);
    if (pgno === 0 || u32(wal, at + 8) !== salt1 || u32(wal, at + 12) !== salt2) break;
    const page = wal.subarray(at + WAL_FRAME_HEADER, at + WAL_FRAME_HEADER + pageSize);
    sum = walChecksum(wal.subarray(at, at + 8), bigEndian, sum);
    sum = walChecksum(page, bigEndian, sum);
    if (sum[0] !== u32(wal, at + 16) || sum[1] !== u32(wal, at + 20)) break;
    pending.set(pgno, page);
    if (commitSize > 0) {
      for (const [p, b] of pending) committed.set(p, b);
      pending = new Map();
      dbPages = commitSize;
    }
  }
  if (dbPages === undefined) return db;
  const out = new Uint8Array(dbPages * pageSize);
  out.set(db.subarray(0, Math.min(db.length, out.length)));
  for (const [p, b] of committed) if (p <= dbPages) out.set(b, (p - 1) * pageSize);
  return out;
}

/** The database with a hot rollback journal played back: each journalled page put back, the file cut to its size before the transaction. */
export function rollbackJournal(db: Uint8Array, journal: Uint8Array): Uint8Array {
  const out = new Uint8Array(db);
  let size = out.length;
  let at = 0;
  let restored = false;
  let truncateTo: number | undefined;
  while (at + 28 <= journal.length && JOURNAL_MAGIC.every((b, i) => journal[at + i] === b)) {
    let nRec = u32(journal, at + 8);
    const nonce = u32(journal, at + 12);
    const initialPages = u32(journal, at + 16);
    const sector = u32(journal, at + 20);
    const pageSize = u32(journal, at + 24);
    if (pageSize < 512 || pageSize > 65536 || sector < 32 || sector > 65536) break;
    if (truncateTo === undefined) truncateTo = initialPages * pageSize;
    const recSize = 4 + pageSize + 4;
    const first = at + sector;
    if (nRec === 0xffffffff) nRec = Math.floor((journal.length - first) / recSize);
    let r = first;
    for (let i = 0; i < nRec && r + recSize <= journal.length; i++, r += recSize) {
      const pgno = u32(journal, r);
      const page = journal.subarray(r + 4, r + 4 + pageSize);
      let cksum = nonce;
      for (let k = pageSize - 200; k > 0; k -= 200) cksum = (cksum + page[k]!) >>> 0;
      if (cksum !== u32(journal, r + 4 + pageSize)) break;
      if (pgno === 0) continue;
      const off = (pgno - 1) * pageSize;
      if (off + pageSize <= out.length) out.set(page, off);
      restored = true;
    }
    if (nRec === 0) break;
    at = Math.ceil(r / sector) * sector;
  }
  if (!restored && truncateTo === undefined) return db;
  size = truncateTo !== undefined && truncateTo > 0 ? Math.min(size, truncateTo) : size;
  return out.subarray(0, size);
}

/** The pulled files as one database image to open from memory; undefined when `db` is not a SQLite database. */
export function databaseImage(db: Uint8Array, extra: { wal?: Uint8Array; journal?: Uint8Array }): Uint8Array | undefined {
  if (dbPageSize(db) === undefined) return undefined;
  let img = db;
  if (extra.wal && extra.wal.length > 0) img = applyWal(img, extra.wal);
  else if (extra.journal && extra.journal.length > 0) img = rollbackJournal(img, extra.journal);
  if (img === db) img = new Uint8Array(db);
  if (img.length >= 20 && (img[18] === 2 || img[19] === 2)) {
    img[18] = 1;
    img[19] = 1;
  }
  return img;
}
