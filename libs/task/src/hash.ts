/** Task identity: sha256 of the canonical JSON of the normalised task, identical on every host. */
import { createHash } from "node:crypto";
import type { Task } from "./model.ts";

/**
 * Canonical form: object keys sorted, undefined dropped, PyRegex as its source, bytes as base64, filesystem APK
 * locations by the path as written (never the host's absolute path), step line numbers left out (not content).
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(canonical(value));
}

function canonical(value: unknown): unknown {
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === "object") {
    const o = value as Record<string, unknown>;
    if (typeof o.source === "string" && typeof o.match === "function" && typeof o.test === "function") return o.source;
    const out: Record<string, unknown> = {}; // keys are the model's own property names, never data
    const isFilesystem = o.kind === "filesystem" && typeof o.declaredPath === "string";
    for (const key of Object.keys(o).sort()) {
      if (o[key] === undefined || key === "line") continue;
      if (isFilesystem && key === "path") continue;
      out[key] = canonical(o[key]);
    }
    return out;
  }
  return value;
}

/**
 * `package_name` / `full_activity_name` are informational (upstream never read them; only the 2021 dialects
 * have them), so they are left out: the same task has one hash in every dialect (`farm task convert`).
 */
export function taskHash(task: Task): string {
  const { packageName: _pkg, fullActivityName: _activity, ...content } = task;
  return createHash("sha256").update(canonicalJson(content)).digest("hex");
}
