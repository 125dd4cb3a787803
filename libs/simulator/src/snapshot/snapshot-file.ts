/**
 * The on-disk form of a device snapshot: JSON with a format tag and version; file contents
 * (Uint8Array) as `{"$bytes": "<base64>"}`.
 */
import type { SavedSystem } from "../android/system/android-system.ts";

const FORMAT = "farm-sim-device-snapshot";
const VERSION = 1;

export function encodeSnapshotFile(state: SavedSystem): Buffer {
  const json = JSON.stringify({ format: FORMAT, version: VERSION, state }, (_k, v: unknown) =>
    v instanceof Uint8Array ? { $bytes: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("base64") } : v,
  );
  return Buffer.from(json);
}

export function decodeSnapshotFile(bytes: Uint8Array): SavedSystem {
  const doc: unknown = JSON.parse(Buffer.from(bytes).toString("utf8"), (_k, v: unknown) => {
    if (v && typeof v === "object" && !Array.isArray(v)) {
      const b = (v as Record<string, unknown>)["$bytes"];
      if (typeof b === "string" && Object.keys(v).length === 1) return new Uint8Array(Buffer.from(b, "base64"));
    }
    return v;
  });
  const d = doc as { format?: unknown; version?: unknown; state?: unknown };
  if (d?.format !== FORMAT) throw new Error(`not a simulated-device snapshot (format ${JSON.stringify(d?.format)})`);
  if (d.version !== VERSION) throw new Error(`snapshot format version ${String(d.version)} is not supported (this simulator reads ${VERSION})`);
  if (!d.state || typeof d.state !== "object") throw new Error("snapshot has no state");
  return d.state as SavedSystem;
}
