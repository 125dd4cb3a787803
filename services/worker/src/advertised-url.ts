/**
 * The base URL others use to reach this worker's HTTP server: FARM_WORKER_URL when set; else the
 * server's own URL, with the host name in place of a wildcard bind (0.0.0.0 / ::).
 */
import os from "node:os";

export function advertisedUrl(configured: string | undefined, servedAt: string | undefined, bindHost: string): string | undefined {
  if (configured) return configured;
  if (!servedAt) return undefined;
  if (bindHost !== "0.0.0.0" && bindHost !== "::") return servedAt;
  const port = new URL(servedAt).port;
  return `http://${os.hostname()}:${port}`;
}
