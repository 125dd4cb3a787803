/**
 * Tensors to and from plain values: which payload carries which dtype, scalars, shapes, and the checks a
 * server makes on what a client sends (wrong type or element count → a message naming the tensor).
 */
import { DataType, type DataTypeValue, type Tensor, type TensorPayloadName } from "./messages.ts";

const PAYLOAD_OF: Record<number, TensorPayloadName> = {
  [DataType.FLOAT]: "floats",
  [DataType.DOUBLE]: "doubles",
  [DataType.INT8]: "int8s",
  [DataType.INT32]: "int32s",
  [DataType.INT64]: "int64s",
  [DataType.UINT8]: "uint8s",
  [DataType.UINT32]: "uint32s",
  [DataType.UINT64]: "uint64s",
  [DataType.BOOL]: "bools",
  [DataType.STRING]: "strings",
};

export function payloadOf(dtype: DataTypeValue): TensorPayloadName {
  const p = PAYLOAD_OF[dtype];
  if (!p) throw new RangeError(`dm_env_rpc: no tensor payload for data type ${dtype}`);
  return p;
}

/** A tensor of `dtype` holding `values` (row-major) with `shape` ([] = scalar). */
export function tensor(dtype: DataTypeValue, values: ArrayLike<number> | readonly string[] | readonly boolean[] | Uint8Array, shape: number[] = []): Tensor {
  const p = payloadOf(dtype);
  const array = p === "uint8s" || p === "int8s" ? (values instanceof Uint8Array ? values : Uint8Array.from(values as ArrayLike<number>)) : Array.from(values as ArrayLike<unknown>);
  return { [p]: { array }, shape } as Tensor;
}

/** Which payload is set (proto-loader's oneof name, or the first present member). */
export function payloadName(t: Tensor): TensorPayloadName | undefined {
  if (t.payload) return t.payload;
  for (const p of Object.values(PAYLOAD_OF)) if (t[p] !== undefined) return p;
  return undefined;
}

/** The tensor's values as numbers (bools → 0/1); throws for strings, protos or an empty tensor. */
export function numbers(t: Tensor, what: string): number[] {
  const p = payloadName(t);
  if (!p) throw new TypeError(`${what}: tensor has no payload`);
  if (p === "strings" || p === "protos") throw new TypeError(`${what}: expected a numeric tensor, got ${p}`);
  const a = t[p]!.array as ArrayLike<number | boolean>;
  return Array.from(a, (v) => Number(v));
}

/** The one number of a scalar (or one-element) numeric tensor. */
export function scalarNumber(t: Tensor, what: string): number {
  const v = numbers(t, what);
  if (v.length !== 1) throw new TypeError(`${what}: expected one value, got ${v.length}`);
  return v[0]!;
}

/** The one string of a scalar string tensor. */
export function scalarString(t: Tensor, what: string): string {
  if (payloadName(t) !== "strings") throw new TypeError(`${what}: expected a string tensor`);
  const a = t.strings!.array;
  if (a.length !== 1) throw new TypeError(`${what}: expected one string, got ${a.length}`);
  return a[0]!;
}
