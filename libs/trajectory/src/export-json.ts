/** One episode as plain JSON (for `farm trajectories export --jsonl`): dates as ISO-8601, bytes as base64. */
import { terminalSafeJson } from "@farm/terminal-text";
import type { StoredEpisode } from "./types.ts";

export function episodeToJson(e: StoredEpisode): string {
  return terminalSafeJson(jsonOf(e));
}

function jsonOf(e: StoredEpisode): string {
  return JSON.stringify(e, (_key, value: unknown) => {
    if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64");
    // Buffers reach the replacer already turned into {type:"Buffer",data:[…]} by their toJSON.
    if (isBufferJson(value)) return Buffer.from(value.data).toString("base64");
    if (typeof value === "number" && !Number.isFinite(value)) return String(value);
    return value;
  });
}

function isBufferJson(v: unknown): v is { type: "Buffer"; data: number[] } {
  return typeof v === "object" && v !== null && (v as { type?: unknown }).type === "Buffer" && Array.isArray((v as { data?: unknown }).data);
}
