/** Task identity: sha256 of the canonical JSON of the normalised task, identical on every host. */
import { createHash } from "node:crypto";
import type { Task } from "./model.ts";

/**
 * JSON with object keys sorted and undefined fields dropped, so equal values serialise equally whatever order
 * their fields came in; RegExp as its source, bytes as base64. The farm's one canonical JSON (task hashes here,
 * campaign identities in the scheduler).
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(canonical(value, () => undefined));
}

/** `keep(o, key)` → false drops a field; anything else keeps it. */
type FieldFilter = (o: Record<string, unknown>, key: string) => false | undefined;

function canonical(value: unknown, filter: FieldFilter): unknown {
  if (value instanceof RegExp) return value.source;
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
  if (Array.isArray(value)) return value.map((v) => canonical(v, filter));
  if (value !== null && typeof value === "object") {
    const o = value as Record<string, unknown>;
    if (typeof o.source === "string" && o.regex instanceof RegExp) return o.source;
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(o).sort()) {
      if (o[key] === undefined || filter(o, key) === false) continue;
      out[key] = canonical(o[key], filter);
    }
    return out;
  }
  return value;
}

/**
 * A task's canonical form: canonicalJson's, plus PyRegex as its source, filesystem APK locations by the path as
 * written (never the host's absolute path), step line numbers left out (not content).
 */
function taskFields(o: Record<string, unknown>, key: string): false | undefined {
  if (key === "line") return false;
  if (key === "path" && o.kind === "filesystem" && typeof o.declaredPath === "string") return false;
  return undefined;
}

export function taskHash(task: Task): string {
  return createHash("sha256").update(JSON.stringify(canonical(task, taskFields))).digest("hex");
}
