/** Column values collected in JS → an Apache Arrow table with the schema of tables.ts. */
import { createRequire } from "node:module";
import type * as arrow from "apache-arrow";
import type { ElementType } from "./extras-spec.ts";
import type { ColumnDef, ColumnType } from "./tables.ts";

let arrowLoaded: typeof arrow | undefined;

/**
 * apache-arrow on first use, not at import: most processes that import `@farm/dataset` never build a table.
 * Its CommonJS build (the one copy every file of this package uses, so `instanceof` holds between them).
 */
export function apacheArrow(): typeof arrow {
  arrowLoaded ??= createRequire(import.meta.url)("apache-arrow") as typeof arrow;
  return arrowLoaded;
}

function elementType(e: ElementType): arrow.DataType {
  const A = apacheArrow();
  switch (e) {
    case "int8": return new A.Int8();
    case "int16": return new A.Int16();
    case "int32": return new A.Int32();
    case "int64": return new A.Int64();
    case "uint8": return new A.Uint8();
    case "uint16": return new A.Uint16();
    case "uint32": return new A.Uint32();
    case "uint64": return new A.Uint64();
    case "float32": return new A.Float32();
    case "float64": return new A.Float64();
    case "bool": return new A.Bool();
    case "string": return new A.Utf8();
  }
}

function imageType(): arrow.DataType {
  const A = apacheArrow();
  return new A.Struct([new A.Field("bytes", new A.Binary(), true), new A.Field("path", new A.Utf8(), true)]);
}

export function arrowType(t: ColumnType): arrow.DataType {
  const A = apacheArrow();
  switch (t.kind) {
    case "value":
      return elementType(t.element);
    case "timestamp":
      return new A.TimestampMillisecond("UTC");
    case "image":
      return imageType();
    case "images":
      return new A.List(new A.Field("item", imageType(), true));
    case "structs":
      return new A.List(new A.Field("item", new A.Struct(t.fields.map((f) => new A.Field(f.name, elementType(f.element), true))), true));
    case "list": {
      let inner: arrow.DataType = elementType(t.element);
      for (let level = 0; level < t.rank; level++) inner = new A.List(new A.Field("item", inner, true));
      return inner;
    }
  }
}

export function arrowSchema(columns: readonly ColumnDef[], metadata: Map<string, string>): arrow.Schema {
  const A = apacheArrow();
  return new A.Schema(columns.map((c) => new A.Field(c.name, arrowType(c.type), true)), metadata);
}

/**
 * `values[i]` holds column i's values, one per row (null allowed). int64/uint64 values are bigint,
 * timestamps are numbers of milliseconds, images `{ bytes, path }` or null, lists (nested) arrays.
 * Arrow buffers are filled directly (typed arrays, one UTF-8 buffer per string column): several times
 * faster than apache-arrow's generic builders for the nested extras columns.
 */
export function buildTable(schema: arrow.Schema, values: readonly unknown[][]): arrow.Table {
  const A = apacheArrow();
  const children = schema.fields.map((f, i) => columnData(f.type, values[i] as unknown[]));
  const length = values[0]?.length ?? 0;
  const batch = new A.RecordBatch(schema, A.makeData({ type: new A.Struct(schema.fields), length, nullCount: 0, children }));
  return new A.Table(schema, [batch]);
}

interface Validity {
  nullCount: number;
  nullBitmap: Uint8Array | undefined;
}

function validity(values: readonly unknown[]): Validity {
  let nulls = 0;
  for (const v of values) if (v === null || v === undefined) nulls++;
  if (nulls === 0) return { nullCount: 0, nullBitmap: undefined };
  const bitmap = new Uint8Array((values.length + 7) >> 3);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v !== null && v !== undefined) bitmap[i >> 3]! |= 1 << (i & 7);
  }
  return { nullCount: nulls, nullBitmap: bitmap };
}

type NumArray = Int8Array | Int16Array | Int32Array | Uint8Array | Uint16Array | Uint32Array | Float32Array | Float64Array;
function columnData(type: arrow.DataType, values: readonly unknown[]): arrow.Data {
  const A = apacheArrow();
  const n = values.length;
  const { nullCount, nullBitmap } = validity(values);
  if (A.DataType.isList(type)) {
    const offsets = new Int32Array(n + 1);
    const flat: unknown[] = [];
    for (let i = 0; i < n; i++) {
      const v = values[i] as unknown[] | null;
      if (v) for (const x of v) flat.push(x);
      offsets[i + 1] = flat.length;
    }
    const child = columnData((type as arrow.List).children[0]!.type, flat);
    return A.makeData({ type: type as arrow.List, length: n, nullCount, nullBitmap, valueOffsets: offsets, child });
  }
  if (A.DataType.isStruct(type)) {
    const fields = (type as arrow.Struct).children;
    const children = fields.map((f) => columnData(f.type, values.map((v) => (v ? (v as Record<string, unknown>)[f.name] : null))));
    return A.makeData({ type: type as arrow.Struct, length: n, nullCount, nullBitmap, children });
  }
  if (A.DataType.isUtf8(type) || A.DataType.isBinary(type)) {
    const offsets = new Int32Array(n + 1);
    let total = 0;
    for (let i = 0; i < n; i++) {
      const v = values[i];
      if (v !== null && v !== undefined) total += typeof v === "string" ? Buffer.byteLength(v) : (v as Uint8Array).byteLength;
      offsets[i + 1] = total;
    }
    const data = Buffer.allocUnsafe(total);
    for (let i = 0; i < n; i++) {
      const v = values[i];
      if (v === null || v === undefined) continue;
      if (typeof v === "string") data.write(v, offsets[i]!, "utf8");
      else data.set(v as Uint8Array, offsets[i]!);
    }
    const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    return A.DataType.isUtf8(type)
      ? A.makeData({ type: type as arrow.Utf8, length: n, nullCount, nullBitmap, valueOffsets: offsets, data: bytes })
      : A.makeData({ type: type as arrow.Binary, length: n, nullCount, nullBitmap, valueOffsets: offsets, data: bytes });
  }
  if (A.DataType.isBool(type)) {
    const bits = new Uint8Array((n + 7) >> 3);
    for (let i = 0; i < n; i++) if (values[i] === true) bits[i >> 3]! |= 1 << (i & 7);
    return A.makeData({ type: type as arrow.Bool, length: n, nullCount, nullBitmap, data: bits });
  }
  if (A.DataType.isTimestamp(type)) {
    const data = new BigInt64Array(n);
    for (let i = 0; i < n; i++) data[i] = BigInt((values[i] as number | null) ?? 0);
    return A.makeData({ type: type as arrow.Timestamp, length: n, nullCount, nullBitmap, data });
  }
  if (A.DataType.isInt(type) && (type as arrow.Int).bitWidth === 64) {
    const signed = (type as arrow.Int).isSigned;
    const data = signed ? new BigInt64Array(n) : new BigUint64Array(n);
    for (let i = 0; i < n; i++) data[i] = (values[i] as bigint | null) ?? 0n;
    return A.makeData({ type: type as arrow.Int64, length: n, nullCount, nullBitmap, data: data as BigInt64Array });
  }
  // Remaining types are fixed-width numbers whose Arrow type names its typed array.
  const Ctor = (type as unknown as { ArrayType?: new (n: number) => NumArray }).ArrayType;
  if (!Ctor || !(A.DataType.isInt(type) || A.DataType.isFloat(type))) throw new Error(`no Arrow buffer builder for ${String(type)}`);
  const data = new Ctor(n);
  for (let i = 0; i < n; i++) data[i] = (values[i] as number | null) ?? 0;
  return A.makeData({ type: type as arrow.Float64, length: n, nullCount, nullBitmap, data: data as Float64Array });
}
