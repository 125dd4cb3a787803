/**
 * The Avro object container layout (Avro spec, "Object Container Files"): header = magic "Obj\x01",
 * metadata map<bytes>, 16-byte sync marker; then blocks = record count (long), byte size (long),
 * the (compressed) records, the sync marker. We write and read it ourselves so that we control fsync,
 * know the exact bytes on disk (rotation by size) and reject truncated files.
 */
import avro from "avsc";

export const MAGIC = Buffer.from([0x4f, 0x62, 0x6a, 0x01]);
export const SYNC_BYTES = 16;

export const headerType = avro.Type.forSchema({
  type: "record",
  name: "org.apache.avro.file.Header",
  fields: [
    { name: "magic", type: { type: "fixed", name: "Magic", size: 4 } },
    { name: "meta", type: { type: "map", values: "bytes" } },
    { name: "sync", type: { type: "fixed", name: "Sync", size: SYNC_BYTES } },
  ],
});

export interface ContainerHeader {
  magic: Buffer;
  meta: Record<string, Buffer>;
  sync: Buffer;
}

export const longType = avro.Type.forSchema("long");

/** Block prefix: record count and byte size as Avro longs (zig-zag varints). */
export function encodeBlockPrefix(count: number, byteSize: number): Buffer {
  const buf = Buffer.allocUnsafe(20);
  let pos = longType.encode(count, buf, 0);
  pos = longType.encode(byteSize, buf, pos);
  return buf.subarray(0, pos);
}
