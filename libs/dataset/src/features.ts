/**
 * Hugging Face `datasets` feature descriptions of a table: the YAML list of a card's
 * `dataset_info.features`, and the JSON form `datasets` itself keeps in a Parquet file's `huggingface`
 * metadata (so `load_dataset` restores the Image feature even without the card).
 * `sequence:` (not the newer `list:`) is used because every `datasets` version reads it.
 */
import type { ColumnDef, ColumnType } from "./tables.ts";

function yamlOfType(t: ColumnType, indent: string): string[] {
  switch (t.kind) {
    case "value":
      return [`${indent}dtype: ${t.element}`];
    case "image":
      return [`${indent}dtype: image`];
    case "images":
      return [`${indent}sequence: image`];
    case "timestamp":
      return [`${indent}dtype: timestamp[ms, tz=UTC]`];
    case "structs":
      // A Python list of dicts (`[{...}]`): `list:` with the dict's fields.
      return [`${indent}list:`, ...t.fields.flatMap((f) => [`${indent}- name: ${yamlString(f.name)}`, `${indent}  dtype: ${f.element}`])];
    case "list": {
      // sequence:\n  sequence: int32  (rank 2) — the innermost level is written inline.
      const lines: string[] = [];
      let pad = indent;
      for (let level = 1; level < t.rank; level++) {
        lines.push(`${pad}sequence:`);
        pad += "  ";
      }
      lines.push(`${pad}sequence: ${t.element}`);
      return lines;
    }
  }
}

/** YAML lines (indented by `indent`) of a `features:` list. */
export function featuresYaml(columns: readonly ColumnDef[], indent: string): string[] {
  const lines: string[] = [];
  for (const c of columns) {
    lines.push(`${indent}- name: ${yamlString(c.name)}`);
    lines.push(...yamlOfType(c.type, `${indent}  `));
  }
  return lines;
}

/** Plain YAML scalar when safe, else a double-quoted JSON string (a subset of YAML). */
export function yamlString(s: string): string {
  return /^[A-Za-z_][A-Za-z0-9_.-]*$/.test(s) ? s : JSON.stringify(s);
}

type JsonFeature = Record<string, unknown>;

function jsonOfType(t: ColumnType): JsonFeature {
  switch (t.kind) {
    case "value":
      return { dtype: t.element, _type: "Value" };
    case "image":
      return { _type: "Image" };
    case "images":
      return { feature: { _type: "Image" }, _type: "Sequence" };
    case "timestamp":
      return { dtype: "timestamp[ms, tz=UTC]", _type: "Value" };
    case "structs":
      return [Object.fromEntries(t.fields.map((f) => [f.name, { dtype: f.element, _type: "Value" }]))] as unknown as JsonFeature;
    case "list": {
      let f: JsonFeature = { dtype: t.element, _type: "Value" };
      for (let level = 0; level < t.rank; level++) f = { feature: f, _type: "Sequence" };
      return f;
    }
  }
}

/** The `huggingface` schema metadata value: `{"info": {"features": {...}}}`. */
export function huggingfaceMetadata(columns: readonly ColumnDef[]): string {
  const features = Object.create(null) as Record<string, JsonFeature>; // names come from tasks: no prototype keys
  for (const c of columns) features[c.name] = jsonOfType(c.type);
  return JSON.stringify({ info: { features } });
}
