/**
 * Walks one Avro datum of a writer schema over raw bytes without building it, checking every declared
 * size before a decoder trusts it: string/bytes lengths and array/map entry counts must fit in the
 * bytes left (or, for items that take no bytes, a count budget), union branches and enum indexes must
 * exist, varints must end. avsc's decoder does none of this and will loop over a billion declared items
 * reading past the buffer; running this first makes decoding safe. Errors name the field path.
 */
import type { Type } from "avsc";
import { AvroBoundsError, NEED_MORE, readLong, readSize } from "./avro-varint.ts";
import { coerceError } from "@farm/errors";

export interface BoundsBudget {
  /** Zero-size items (nulls, empty records) still allowed in the current block. */
  zeroSizeItems: number;
}

interface Walker {
  (buf: Uint8Array, pos: number, end: number, budget: BoundsBudget): number;
}

/** An AvroBoundsError that collects its field path while it propagates (built only on failure). */
class PathedError extends AvroBoundsError {
  readonly segments: string[] = [];
  constructor(readonly why: string) {
    super(why);
  }
}

function within(err: unknown, segment: string): never {
  if (err instanceof PathedError) err.segments.unshift(segment);
  throw err;
}

const walkers = new WeakMap<Type, Walker>();
const minSizes = new WeakMap<Type, number>();

function fail(why: string): never {
  throw new PathedError(why);
}

function need(r: { offset: number }, what: string): void {
  if (r.offset === NEED_MORE) fail(`${what} runs past the end of its block`);
}

/** readSize with its AvroBoundsError turned into a PathedError. */
function size(b: Uint8Array, p: number, e: number, what: string, max: number): { value: number; offset: number } {
  try {
    const r = readSize(b, p, e, what, max);
    need(r, what);
    return r;
  } catch (err) {
    if (err instanceof PathedError) throw err;
    return fail(coerceError(err).message);
  }
}

/** Fewest bytes a value of `t` can take (0 for null and records made only of such). */
function minSize(t: Type, depth = 0): number {
  const cached = minSizes.get(t);
  if (cached !== undefined) return cached;
  if (depth > 64) return 1; // recursive schema: a record that contains itself takes at least its union byte
  const a = t as Type & { underlyingType?: Type; fields?: { type: Type }[]; size?: number };
  let n: number;
  switch (a.typeName) {
    case "null":
      n = 0;
      break;
    case "fixed":
      n = a.size ?? 0;
      break;
    case "record":
    case "error":
      n = (a.fields ?? []).reduce((s, f) => s + minSize(f.type, depth + 1), 0);
      break;
    default:
      n = a.underlyingType ? minSize(a.underlyingType, depth + 1) : 1;
  }
  minSizes.set(t, n);
  return n;
}

function walkerFor(t: Type): Walker {
  let w = walkers.get(t);
  if (w) return w;
  // Placeholder first, so recursive schemas resolve to the walker being built.
  const lazy: Walker = (b, p, e, g) => walkers.get(t)!(b, p, e, g);
  walkers.set(t, lazy);
  w = buildWalker(t);
  walkers.set(t, w);
  return w;
}

function long(buf: Uint8Array, pos: number, end: number, what: string): { value: number; offset: number } {
  let r: { value: number; offset: number };
  try {
    r = readLong(buf, pos, end);
  } catch (err) {
    return fail(coerceError(err).message);
  }
  need(r, what);
  return r;
}

function fixedBytes(n: number): Walker {
  return (_b, p, e) => (p + n > e ? fail("value runs past the end of its block") : p + n);
}

function buildWalker(t: Type): Walker {
  const a = t as Type & {
    underlyingType?: Type;
    fields?: { name: string; type: Type }[];
    itemsType?: Type;
    valuesType?: Type;
    types?: Type[];
    symbols?: string[];
    size?: number;
  };
  if (a.underlyingType) return walkerFor(a.underlyingType);
  switch (a.typeName) {
    case "null":
      return (_b, p) => p;
    case "boolean":
      return fixedBytes(1);
    case "int":
    case "long":
      return (b, p, e) => long(b, p, e, "number").offset;
    case "float":
      return fixedBytes(4);
    case "double":
      return fixedBytes(8);
    case "fixed":
      return fixedBytes(a.size ?? 0);
    case "bytes":
    case "string":
      return (b, p, e) => {
        const len = size(b, p, e, `${a.typeName} length`, e - p);
        if (len.offset + len.value > e) fail(`${a.typeName} of ${len.value} bytes runs past the end of its block`);
        return len.offset + len.value;
      };
    case "enum": {
      const symbols = a.symbols?.length ?? 0;
      return (b, p, e) => {
        const r = long(b, p, e, "enum index");
        if (r.value < 0 || r.value >= symbols) fail(`enum index ${r.value} is not one of the ${symbols} symbols`);
        return r.offset;
      };
    }
    case "union:unwrapped":
    case "union:wrapped": {
      const branches = (a.types ?? []).map(walkerFor);
      return (b, p, e, g) => {
        const r = long(b, p, e, "union branch");
        const branch = branches[r.value];
        if (r.value < 0 || !branch) fail(`union branch ${r.value} does not exist (the schema has ${branches.length})`);
        return branch(b, r.offset, e, g);
      };
    }
    case "record":
    case "error": {
      const fields = (a.fields ?? []).map((f) => ({ name: f.name, walk: walkerFor(f.type) }));
      return (b, p, e, g) => {
        for (const f of fields) {
          try {
            p = f.walk(b, p, e, g);
          } catch (err) {
            within(err, f.name);
          }
        }
        return p;
      };
    }
    case "array":
      return blocksWalker(a.itemsType!, false);
    case "map":
      return blocksWalker(a.valuesType as Type, true);
    default:
      throw new AvroBoundsError(`unsupported Avro type ${a.typeName}`);
  }
}

/** Arrays and maps: blocks of (count, [byte size], items), ended by a zero count. */
function blocksWalker(itemType: Type, isMap: boolean): Walker {
  const item = walkerFor(itemType);
  const keyWalk = isMap ? buildWalker({ typeName: "string" } as Type) : undefined;
  const itemMin = minSize(itemType) + (isMap ? 1 : 0);
  return (b, p, e, g) => {
    let index = 0;
    for (;;) {
      const c = long(b, p, e, "block count");
      p = c.offset;
      let n = c.value;
      if (n === 0) return p;
      if (n < 0) {
        n = -n;
        p = size(b, p, e, "block byte size", e - p).offset;
      }
      if (itemMin > 0) {
        if (n * itemMin > e - p) fail(`declares ${n} entries but only ${e - p} bytes are left`);
      } else {
        if (n > g.zeroSizeItems) fail(`declares ${n} empty entries, more than the reader's budget allows`);
        g.zeroSizeItems -= n;
      }
      for (let i = 0; i < n; i++, index++) {
        try {
          if (keyWalk) p = keyWalk(b, p, e, g);
          p = item(b, p, e, g);
        } catch (err) {
          within(err, `[${index}]`);
        }
      }
    }
  };
}

/** Checks the datum of writer type `t` at `pos`; returns where it ends, or throws AvroBoundsError naming the field. */
export function checkAvroDatum(t: Type, buf: Uint8Array, pos: number, end: number, budget: BoundsBudget): number {
  try {
    return walkerFor(t)(buf, pos, end, budget);
  } catch (err) {
    if (!(err instanceof PathedError)) throw err;
    const where = err.segments.join(".").replace(/\.\[/g, "[");
    throw new AvroBoundsError(where ? `${where}: ${err.why}` : err.why);
  }
}
