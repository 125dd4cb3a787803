/** avsc encodes JS numbers as Avro longs only within ±(2^53 − 2) (zig-zag needs one spare bit). */
export const MAX_AVRO_LONG = 9007199254740990;

export function isAvroLong(v: unknown): v is number {
  return typeof v === "number" && Number.isInteger(v) && Math.abs(v) <= MAX_AVRO_LONG;
}
