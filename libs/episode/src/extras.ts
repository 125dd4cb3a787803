/**
 * Extras: a per-step buffer (per name, capped like upstream's extras_max_buffer_size = 100, oldest dropped)
 * and extras_spec enforcement. Upstream never checked extras against their spec; the farm does: a value whose
 * shape or dtype disagrees with its declared ArraySpec is dropped, counted and reported, never written.
 * Names the spec does not declare are kept with an inferred dtype (and counted as undeclared).
 */
import type { ExtraValue } from "@farm/policy";
import type { ArraySpec, DataType } from "@farm/task";
import type { StepExtra } from "./trajectory-types.ts";

/** Shape of a (nested-array) value, or undefined when it is ragged. Scalars have shape []. */
export function shapeOf(value: unknown): number[] | undefined {
  if (!Array.isArray(value)) return [];
  if (value.length === 0) return [0];
  let inner: number[] | undefined;
  for (const v of value) {
    const s = shapeOf(v);
    if (s === undefined) return undefined;
    if (inner === undefined) inner = s;
    else if (s.length !== inner.length || s.some((d, i) => d !== inner![i])) return undefined;
  }
  return [value.length, ...(inner ?? [])];
}

function leaves(value: unknown, out: unknown[] = []): unknown[] {
  if (Array.isArray(value)) for (const v of value) leaves(v, out);
  else out.push(value);
  return out;
}

const INT_RANGES: Partial<Record<DataType, [number, number]>> = {
  INT8: [-128, 127],
  INT16: [-32768, 32767],
  INT32: [-2147483648, 2147483647],
  INT64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  UINT8: [0, 255],
  UINT16: [0, 65535],
  UINT32: [0, 4294967295],
  UINT64: [0, Number.MAX_SAFE_INTEGER],
};

const STRING_MAX: Partial<Record<DataType, number>> = { STRING_U1: 1, STRING_U16: 16, STRING_U25: 25, STRING_U250: 250, STRING: Infinity };

/** Whether one scalar fits a dtype (numpy-like: ints are valid floats; booleans are 0/1 only for BOOL). */
export function leafFits(dtype: DataType, v: unknown): boolean {
  if (dtype === "OBJECT") return true;
  if (dtype === "BOOL") return typeof v === "boolean" || v === 0 || v === 1;
  if (dtype === "FLOAT") return typeof v === "number" && Number.isFinite(v) && Math.abs(v) <= 3.4028234663852886e38;
  if (dtype === "DOUBLE") return typeof v === "number" && Number.isFinite(v);
  const range = INT_RANGES[dtype];
  if (range) return typeof v === "number" && Number.isInteger(v) && v >= range[0] && v <= range[1];
  const max = STRING_MAX[dtype];
  if (max !== undefined) return typeof v === "string" && [...v].length <= max;
  return false;
}

/** The dtype the farm records for an undeclared extra. */
export function inferDtype(value: unknown): DataType {
  const ls = leaves(value);
  if (ls.length > 0 && ls.every((v) => typeof v === "boolean")) return "BOOL";
  if (ls.length > 0 && ls.every((v) => typeof v === "number")) return ls.every((v) => Number.isSafeInteger(v)) ? "INT64" : "DOUBLE";
  if (ls.length > 0 && ls.every((v) => typeof v === "string")) return "STRING";
  return "OBJECT";
}

export type ExtraCheck =
  | { ok: true; extra: StepExtra; declared: boolean }
  | { ok: false; reason: "shape" | "dtype" | "ragged"; detail: string };

const sameShape = (a: number[], b: number[]) => a.length === b.length && a.every((d, i) => d === b[i]);

/**
 * Checks one value against the spec. A scalar is accepted where the spec says shape [1] and stored as a
 * one-element list (apps log counters both ways; numpy would broadcast it). Shape -1 dims are wildcards.
 */
export function checkExtra(name: string, value: unknown, specs: ReadonlyMap<string, ArraySpec>): ExtraCheck {
  const shape = shapeOf(value);
  const spec = specs.get(name);
  if (!spec) {
    if (shape === undefined) return { ok: false, reason: "ragged", detail: `extra '${name}' is a ragged list` };
    return { ok: true, declared: false, extra: { name, dtype: inferDtype(value), shape, value } };
  }
  if (spec.dtype === "OBJECT" && shape === undefined) return { ok: true, declared: true, extra: { name, dtype: spec.dtype, shape: [], value } };
  if (shape === undefined) return { ok: false, reason: "ragged", detail: `extra '${name}' is a ragged list` };
  let v = value;
  let s = shape;
  if (s.length === 0 && spec.shape.length === 1 && spec.shape[0] === 1) {
    v = [value];
    s = [1];
  }
  const want = spec.shape;
  const shapeOk = spec.dtype === "OBJECT" && want.length === 0 ? true : s.length === want.length && s.every((d, i) => want[i]! < 0 || d === want[i]);
  if (!shapeOk) return { ok: false, reason: "shape", detail: `extra '${name}' has shape [${s.join(",")}], spec says [${want.join(",")}]` };
  const ls = leaves(v);
  const badAt = ls.findIndex((x) => !leafFits(spec.dtype, x));
  if (badAt >= 0) {
    return { ok: false, reason: "dtype", detail: `extra '${name}' value ${JSON.stringify(ls[badAt])} does not fit dtype ${spec.dtype}` };
  }
  return { ok: true, declared: true, extra: { name, dtype: spec.dtype, shape: sameShape(s, want) ? [...want] : s, value: v } };
}

/** Extras logged since the last step, per name, oldest first; capped per name. */
export class ExtrasBuffer {
  private readonly byName = new Map<string, StepExtra[]>();
  private order: string[] = [];
  /** Values pushed out by the cap since construction. */
  overflowed = 0;

  constructor(
    private readonly capPerName = 100,
    /** Distinct names per step; values under further names are dropped (and counted in `overflowed`). */
    private readonly maxNames = Infinity,
  ) {}

  add(extra: StepExtra): void {
    let list = this.byName.get(extra.name);
    if (!list) {
      if (this.byName.size >= this.maxNames) {
        this.overflowed++;
        return;
      }
      list = [];
      this.byName.set(extra.name, list);
      this.order.push(extra.name);
    }
    list.push(extra);
    if (list.length > this.capPerName) {
      list.shift();
      this.overflowed++;
    }
  }

  /** Takes and clears everything buffered, grouped by name in first-seen order. */
  take(): StepExtra[] {
    const out: StepExtra[] = [];
    for (const n of this.order) out.push(...(this.byName.get(n) ?? []));
    this.byName.clear();
    this.order = [];
    return out;
  }

  clear(): void {
    this.byName.clear();
    this.order = [];
  }
}

/** The extras of an observation, by name. Null prototype: names come from log lines ("constructor", "__proto__" are just names). */
export function extrasByName(extras: readonly StepExtra[]): Record<string, ExtraValue[]> {
  const out: Record<string, ExtraValue[]> = Object.create(null);
  for (const e of extras) (out[e.name] ??= []).push({ value: e.value, shape: e.shape });
  return out;
}
