/**
 * Extras in a form any Avro reader can use without our code: dtype and shape as declared, the value
 * flattened row-major into one typed array chosen by dtype, or JSON text when it does not fit
 * (OBJECT dtype, nesting that differs from the shape, leaves of the wrong type).
 */
import type { StepExtra } from "@farm/episode";
import type { DataType } from "@farm/task";
import { isAvroLong } from "./avro-long.ts";
import { coerceError } from "@farm/errors";

/** The Avro shape of `farm.trajectory.Extra`. */
export interface AvroExtra {
  name: string;
  dtype: string;
  shape: number[];
  doubles: number[] | null;
  longs: number[] | null;
  strings: string[] | null;
  booleans: boolean[] | null;
  json: string | null;
}

type Slot = "doubles" | "longs" | "strings" | "booleans" | "json";

function slotFor(dtype: DataType | string): Slot {
  switch (dtype) {
    case "FLOAT":
    case "DOUBLE":
      return "doubles";
    case "INT8": case "INT16": case "INT32": case "INT64":
    case "UINT8": case "UINT16": case "UINT32": case "UINT64":
      return "longs";
    case "BOOL":
      return "booleans";
    case "STRING": case "STRING_U1": case "STRING_U16": case "STRING_U25": case "STRING_U250":
      return "strings";
    default:
      return "json";
  }
}

const leafFits: Record<Exclude<Slot, "json">, (v: unknown) => boolean> = {
  doubles: (v) => typeof v === "number",
  longs: isAvroLong,
  strings: (v) => typeof v === "string",
  booleans: (v) => typeof v === "boolean",
};

// Module-level recursive helpers, not per-call closures: tsx (esbuild keepNames) wraps every named
// closure in a defineProperty call, which made per-extra closures the writer's main cost.

/** Appends the row-major leaves of `v` to `out` if it is a regular nested array of exactly `shape[depth..]` with fitting leaves. */
function flattenInto(v: unknown, shape: readonly number[], depth: number, fits: (v: unknown) => boolean, out: unknown[]): boolean {
  if (depth === shape.length) {
    if (Array.isArray(v) || !fits(v)) return false;
    out.push(v);
    return true;
  }
  if (!Array.isArray(v) || v.length !== shape[depth]) return false;
  for (let i = 0; i < v.length; i++) if (!flattenInto(v[i], shape, depth + 1, fits, out)) return false;
  return true;
}

/** Row-major leaves of `value`, or null when it does not match `shape` and the dtype. */
function flatten(value: unknown, shape: readonly number[], fits: (v: unknown) => boolean): unknown[] | null {
  const out: unknown[] = [];
  return flattenInto(value, shape, 0, fits, out) ? out : null;
}

function buildNested(leaves: readonly unknown[], shape: readonly number[], depth: number, cursor: { pos: number }): unknown[] {
  const n = shape[depth] ?? 0;
  const arr = new Array<unknown>(n);
  for (let i = 0; i < n; i++) arr[i] = depth === shape.length - 1 ? leaves[cursor.pos++] : buildNested(leaves, shape, depth + 1, cursor);
  return arr;
}

function unflatten(leaves: readonly unknown[], shape: readonly number[]): unknown {
  return shape.length === 0 ? leaves[0] : buildNested(leaves, shape, 0, { pos: 0 });
}

/** JSON that survives bigint (as a decimal string). */
function toJson(value: unknown): string {
  return JSON.stringify(value === undefined ? null : value, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v)) ?? "null";
}

export function extraToAvro(extra: StepExtra): AvroExtra {
  const rec: AvroExtra = {
    name: extra.name,
    dtype: extra.dtype,
    shape: extra.shape,
    doubles: null,
    longs: null,
    strings: null,
    booleans: null,
    json: null,
  };
  const slot = slotFor(extra.dtype);
  const leaves = slot === "json" ? null : flatten(extra.value, extra.shape, leafFits[slot]);
  if (slot !== "json" && leaves) (rec[slot] as unknown[]) = leaves;
  else rec.json = toJson(extra.value);
  return rec;
}

/**
 * How many arrays unflattening `shape` builds (1 + d0 + d0·d1 + … over all but the leaf level), or
 * Infinity when a dimension is not a non-negative integer. A shape such as [1e9, 0] holds no leaves
 * but would build a billion empty arrays; callers bound this before building anything.
 */
export function shapeNodeCount(shape: readonly number[]): number {
  let nodes = shape.length > 0 ? 1 : 0;
  let level = 1;
  for (let d = 0; d < shape.length - 1; d++) {
    const dim = shape[d]!;
    if (!Number.isSafeInteger(dim) || dim < 0) return Infinity;
    level *= dim;
    nodes += level;
    if (nodes > Number.MAX_SAFE_INTEGER) return Infinity;
  }
  const last = shape[shape.length - 1];
  if (last !== undefined && (!Number.isSafeInteger(last) || last < 0)) return Infinity;
  return nodes;
}

/** Reads an extra back. `budget.nodes` caps the arrays a declared shape may build (shared by a record's extras). */
export function extraFromAvro(rec: AvroExtra, budget: { nodes: number } = { nodes: 1_000_000 }): StepExtra {
  const shape = rec.shape;
  let value: unknown;
  if (rec.json !== null && rec.json !== undefined) {
    try {
      value = JSON.parse(rec.json);
    } catch (err) {
      throw new Error(`json value does not parse: ${coerceError(err).message}`);
    }
  } else {
    const leaves = rec.doubles ?? rec.longs ?? rec.strings ?? rec.booleans ?? [];
    const nodes = shapeNodeCount(shape);
    if (nodes === Infinity) throw new Error(`shape [${shape.slice(0, 8).join(", ")}${shape.length > 8 ? ", …" : ""}] has a dimension that is not a non-negative integer`);
    if (nodes > budget.nodes) throw new Error(`shape [${shape.slice(0, 8).join(", ")}${shape.length > 8 ? ", …" : ""}] would build ${nodes} arrays, more than the read budget allows`);
    const size = shape.reduce((a, b) => a * b, 1);
    // A producer that ignored the shape still round-trips as a flat list.
    if (leaves.length === size) {
      budget.nodes -= nodes;
      value = unflatten(leaves, shape);
    } else value = leaves;
  }
  return { name: rec.name, dtype: rec.dtype as DataType, shape, value };
}
