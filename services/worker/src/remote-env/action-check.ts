/**
 * A StepRequest's actions and requested observations checked against the world's specs, as dm_env_rpc's
 * compliance suites expect: unknown uids, wrong dtypes (payload), wrong shapes and out-of-range values are
 * INVALID_ARGUMENT naming the uid; one variable dimension (negative) is inferred and a single value is
 * broadcast to the spec's shape (dm_env_rpc overview: "Variable lengths", "Broadcastable").
 */
import { DataType, numbers, payloadName, payloadOf, type Tensor, type TensorSpec } from "@farm/dm-env-rpc";
import { invalid } from "./env-error.ts";

const MAX_LISTED = 8;

const listed = (specs: Record<string, TensorSpec>) =>
  Object.entries(specs)
    .slice(0, MAX_LISTED)
    .map(([uid, s]) => `${uid} (${s.name})`)
    .join(", ");

/** The requested observation uids (duplicates collapse); an unknown one is refused, naming it. */
export function checkRequested(requested: readonly (number | string)[], specs: Record<string, TensorSpec>): Set<number> {
  const out = new Set<number>();
  for (const r of requested) {
    const uid = String(r);
    if (!Object.hasOwn(specs, uid)) throw invalid(`Step: unknown observation uid ${uid.slice(0, 24)}; this world's observations are ${listed(specs)}`);
    out.add(Number(uid));
  }
  return out;
}

const count = (shape: readonly number[]) => shape.reduce((a, d) => a * d, 1);

/** The tensor's shape with its one variable dimension inferred from the element count. */
function resolvedShape(shape: readonly number[], n: number, what: string): number[] {
  const variable = shape.filter((d) => d < 0).length;
  if (variable === 0) return [...shape];
  if (variable > 1) throw invalid(`${what}: shape [${shape.join(", ")}] has more than one variable (negative) dimension`);
  const rest = count(shape.filter((d) => d >= 0));
  if (rest === 0 || n % rest !== 0) throw invalid(`${what}: ${n} values do not fill shape [${shape.join(", ")}]`);
  return shape.map((d) => (d < 0 ? n / rest : d));
}

/** One action's values, row-major at the spec's shape (a single value broadcast), after dtype, shape and range checks. */
export function conformAction(t: Tensor, spec: TensorSpec, what: string): number[] {
  const want = payloadOf(spec.dtype);
  const got = payloadName(t);
  if (got !== want) throw invalid(`${what}: expected dtype ${want}, got ${got ?? "no values"}`);
  const values = numbers(t, what);
  const shape = resolvedShape(t.shape ?? [], values.length, what);
  const same = shape.length === spec.shape.length && shape.every((d, i) => d === spec.shape[i]);
  if (!same) throw invalid(`${what}: shape [${shape.join(", ")}] does not match the spec's [${spec.shape.join(", ")}]`);
  const n = count(spec.shape);
  if (values.length !== n && values.length !== 1) throw invalid(`${what}: ${values.length} values for shape [${spec.shape.join(", ")}] (${n} values, or 1 to broadcast)`);
  const full = values.length === n ? values : new Array<number>(n).fill(values[0]!);
  checkRange(full, spec, what);
  return full;
}

const bound = (b: TensorSpec["min"], what: string): number[] | undefined => (b && Object.keys(b).length > 0 ? numbers(b as Tensor, what) : undefined);

function checkRange(values: number[], spec: TensorSpec, what: string): void {
  const min = bound(spec.min, what);
  const max = bound(spec.max, what);
  values.forEach((v, i) => {
    const lo = min?.[min.length === 1 ? 0 : i];
    const hi = max?.[max.length === 1 ? 0 : i];
    if (!Number.isFinite(v) || (lo !== undefined && v < lo) || (hi !== undefined && v > hi)) {
      throw invalid(`${what}: element ${i} is ${v}, outside [${lo ?? "-inf"}, ${hi ?? "inf"}]`);
    }
  });
}

/** Longest string action taken at all (a UI action is a small JSON object; more is refused, not parsed). */
export const STRING_ACTION_MAX_BYTES = 64 * 1024;

/** A scalar string action (`ui_action`): exactly one string, shape [] as its spec, at most STRING_ACTION_MAX_BYTES. */
export function conformString(t: Tensor, spec: TensorSpec, what: string): string {
  const got = payloadName(t);
  if (got !== payloadOf(spec.dtype)) throw invalid(`${what}: expected dtype ${payloadOf(spec.dtype)}, got ${got ?? "no values"}`);
  const values = t.strings?.array ?? [];
  const shape = t.shape ?? [];
  if (shape.length !== spec.shape.length || values.length !== 1) throw invalid(`${what}: one string with shape [${spec.shape.join(", ")}], got ${values.length} with shape [${shape.join(", ")}]`);
  const s = String(values[0]);
  if (Buffer.byteLength(s, "utf8") > STRING_ACTION_MAX_BYTES) throw invalid(`${what}: longer than ${STRING_ACTION_MAX_BYTES} bytes`);
  return s;
}

/** Every action of a Step checked against the specs: by uid, numeric values at the spec's shape, or one string. */
export function conformActions(actions: Record<string, Tensor>, specs: Record<string, TensorSpec>): Map<string, number[] | string> {
  const out = new Map<string, number[] | string>();
  for (const [uid, t] of Object.entries(actions)) {
    const spec = Object.hasOwn(specs, uid) ? specs[uid] : undefined;
    if (!spec) throw invalid(`Step: unknown action uid ${uid.slice(0, 24)}; this world's actions are ${listed(specs)}`);
    const what = `Step: action ${uid} (${spec.name})`;
    out.set(uid, spec.dtype === DataType.STRING ? conformString(t, spec, what) : conformAction(t, spec, what));
  }
  return out;
}
