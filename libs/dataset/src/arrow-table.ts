/** Column values collected in JS → an Apache Arrow table with the schema of tables.ts. */
import * as arrow from "apache-arrow";
import type { ElementType } from "./extras-spec.ts";
import type { ColumnDef, ColumnType } from "./tables.ts";

function elementType(e: ElementType): arrow.DataType {
  switch (e) {
    case "int8": return new arrow.Int8();
    case "int16": return new arrow.Int16();
    case "int32": return new arrow.Int32();
    case "int64": return new arrow.Int64();
    case "uint8": return new arrow.Uint8();
    case "uint16": return new arrow.Uint16();
    case "uint32": return new arrow.Uint32();
    case "uint64": return new arrow.Uint64();
    case "float32": return new arrow.Float32();
    case "float64": return new arrow.Float64();
    case "bool": return new arrow.Bool();
    case "string": return new arrow.Utf8();
  }
}

export function arrowType(t: ColumnType): arrow.DataType {
  switch (t.kind) {
    case "value":
      return elementType(t.element);
    case "timestamp":
      return new arrow.TimestampMillisecond("UTC");
    case "image":
      return new arrow.Struct([new arrow.Field("bytes", new arrow.Binary(), true), new arrow.Field("path", new arrow.Utf8(), true)]);
    case "list": {
      let inner: arrow.DataType = elementType(t.element);
      for (let level = 0; level < t.rank; level++) inner = new arrow.List(new arrow.Field("item", inner, true));
      return inner;
    }
  }
}

export function arrowSchema(columns: readonly ColumnDef[], metadata: Map<string, string>): arrow.Schema {
  return new arrow.Schema(columns.map((c) => new arrow.Field(c.name, arrowType(c.type), true)), metadata);
}

/**
 * `values[i]` holds column i's values, one per row (null allowed). int64/uint64 values are bigint,
 * timestamps are numbers of milliseconds, images `{ bytes, path }` or null.
 */
export function buildTable(schema: arrow.Schema, values: readonly unknown[][]): arrow.Table {
  const children = schema.fields.map((f, i) => {
    const data = arrow.vectorFromArray(values[i] as unknown[], f.type).data;
    if (data.length !== 1) throw new Error(`column ${f.name}: expected one Arrow chunk, got ${data.length}`);
    return data[0]!;
  });
  const length = values[0]?.length ?? 0;
  const batch = new arrow.RecordBatch(schema, arrow.makeData({ type: new arrow.Struct(schema.fields), length, nullCount: 0, children }));
  return new arrow.Table(schema, [batch]);
}
