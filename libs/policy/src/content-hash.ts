import { createHash } from "node:crypto";

/** Policy version for file-backed policies: the first 12 hex digits of the file's SHA-256. */
export function contentVersion(content: string | Uint8Array): string {
  return createHash("sha256").update(content).digest("hex").slice(0, 12);
}
