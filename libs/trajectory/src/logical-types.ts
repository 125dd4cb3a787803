/**
 * avsc does not build in Avro logical types; we register timestamp-millis so `startedAt`/`endedAt` are
 * JS Dates on both sides, while other readers see the standard logical type.
 */
import avro from "avsc";
import type { Schema, Type } from "avsc";

class TimestampMillisType extends avro.types.LogicalType {
  protected override _fromValue(val: number): Date {
    return new Date(val);
  }
  protected override _toValue(date: unknown): number | undefined {
    // undefined tells avsc the value is invalid.
    return date instanceof Date && !Number.isNaN(date.getTime()) ? date.getTime() : undefined;
  }
  protected override _resolve(writer: Type): ((v: unknown) => Date) | undefined {
    if (writer instanceof TimestampMillisType) return (v) => v as Date;
    if (avro.Type.isType(writer, "long", "int")) return (v) => new Date(v as number);
    return undefined;
  }
}

/** An avsc Type for a schema with our logical types registered. */
export function avroTypeFor(schema: Schema): Type {
  // A fresh options object each time: avsc keeps its name registry in it.
  return avro.Type.forSchema(schema, { logicalTypes: { "timestamp-millis": TimestampMillisType } });
}

const typeCache = new Map<Schema, Type>();

/** avroTypeFor, built once per schema object (building a type is not free); shared by writers and readers. */
export function cachedAvroTypeFor(schema: Schema): Type {
  let t = typeCache.get(schema);
  if (!t) typeCache.set(schema, (t = avroTypeFor(schema)));
  return t;
}
