/**
 * The extras columns of a data set: one typed column per extra name, its element type from the extras'
 * dtype and its list nesting from the rank of their shape (an extras_spec entry with shape [4, 4] becomes
 * list<list<int32>>; shape [] a plain scalar). Discovered from the episodes themselves (the Avro record
 * carries dtype and shape with every value), first episode in input order wins.
 */
import type { StepExtra } from "@farm/episode";

/** Element types a column can have (Arrow and Hugging Face `Value` dtype names). */
export type ElementType =
  | "int8" | "int16" | "int32" | "int64"
  | "uint8" | "uint16" | "uint32" | "uint64"
  | "float32" | "float64" | "bool" | "string";

export interface ExtraColumn {
  /** The extra's name as in the task's extras_spec. */
  name: string;
  /** Column name in the steps table: `extra_<name>`. */
  column: string;
  /** dtype as declared (FLOAT, INT32, …); OBJECT is stored as JSON text. */
  dtype: string;
  /** Rank of the declared shape: 0 = scalar, 2 = list<list<…>>. */
  rank: number;
  element: ElementType;
}

const ELEMENT_OF_DTYPE: Record<string, ElementType> = {
  FLOAT: "float32",
  DOUBLE: "float64",
  INT8: "int8",
  INT16: "int16",
  INT32: "int32",
  INT64: "int64",
  UINT8: "uint8",
  UINT16: "uint16",
  UINT32: "uint32",
  UINT64: "uint64",
  BOOL: "bool",
};

/** Element type of a dtype; STRING* and OBJECT (JSON text) and unknown dtypes are strings. */
export function elementOf(dtype: string): ElementType {
  return Object.hasOwn(ELEMENT_OF_DTYPE, dtype) ? ELEMENT_OF_DTYPE[dtype]! : "string";
}

/** OBJECT values (and unknown dtypes) are stored as JSON text: their nesting is not a typed list. */
export function isJsonDtype(dtype: string): boolean {
  return !Object.hasOwn(ELEMENT_OF_DTYPE, dtype) && !dtype.startsWith("STRING");
}

export function columnFor(name: string, dtype: string, shape: readonly number[]): ExtraColumn {
  const json = isJsonDtype(dtype);
  return { name, column: `extra_${name}`, dtype, rank: json ? 0 : shape.length, element: elementOf(dtype) };
}

/** Name → column; keeps the order of first appearance (then sorted for the file schema). */
export class ExtrasSpec {
  private readonly byName = new Map<string, ExtraColumn>();

  static from(columns: readonly ExtraColumn[]): ExtrasSpec {
    const s = new ExtrasSpec();
    for (const c of columns) s.byName.set(c.name, c);
    return s;
  }

  get(name: string): ExtraColumn | undefined {
    return this.byName.get(name);
  }

  /** Columns sorted by name: the schema does not depend on which episode came first. */
  columns(): ExtraColumn[] {
    return [...this.byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /**
   * Why these extras do not fit the spec (a name seen before with another dtype or rank), or undefined.
   * With `grow` new names are added; without it (incremental export into an existing schema) a new
   * name is a misfit too.
   */
  misfit(extras: readonly StepExtra[], grow: boolean): string | undefined {
    for (const e of extras) {
      const col = columnFor(e.name, e.dtype, e.shape);
      const known = this.byName.get(e.name);
      if (!known) {
        if (!grow) return `extra '${e.name}' is not a column of the existing data set (a new column needs a full export into a new folder)`;
        continue;
      }
      if (known.dtype !== col.dtype || known.rank !== col.rank) {
        return `extra '${e.name}' is ${col.dtype} of rank ${col.rank}, the data set's column is ${known.dtype} of rank ${known.rank}`;
      }
    }
    return undefined;
  }

  add(extras: readonly StepExtra[]): void {
    for (const e of extras) if (!this.byName.has(e.name)) this.byName.set(e.name, columnFor(e.name, e.dtype, e.shape));
  }
}
