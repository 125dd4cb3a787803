/**
 * `GET /devices/<serial>/screen` on the worker's HTTP server (the /metrics one): the device's current
 * screen as a small JPEG thumbnail (at most 320 px wide), for the scheduler's fleet page. Only serials
 * this worker has bound are served; one capture per device at a time, reused for a second.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { DeviceSource } from "./device-source.ts";
import { coerceError } from "@farm/errors";
import { encodeFrame } from "@farm/frames";

const THUMB_WIDTH = 320;
const CACHE_MS = 1000;
const ROUTE = /^\/devices\/([^/]{1,200})\/screen$/;

export function deviceScreenRoute(driver: DeviceSource, isBound: (serial: string) => boolean) {
  const recent = new Map<string, { at: number; jpeg: Promise<Buffer> }>();

  const capture = async (serial: string): Promise<Buffer> => {
    const shot = await driver.device(serial).screenshot({ timeoutMs: 10_000 });
    if (!("rgba" in shot)) throw new Error(`screenshot failed: ${shot.message}`);
    const width = Math.min(THUMB_WIDTH, shot.width);
    const height = Math.max(1, Math.round((shot.height * width) / shot.width));
    return encodeFrame({ width: shot.width, height: shot.height, channels: 4, data: shot.rgba }, { format: "jpeg", quality: 70, size: { width, height } });
  };

  return (path: string, _req: IncomingMessage, res: ServerResponse): boolean => {
    const m = ROUTE.exec(path);
    if (!m) return false;
    let serial: string;
    try {
      serial = decodeURIComponent(m[1]!);
    } catch {
      res.writeHead(400, { "content-type": "text/plain" }).end("bad serial encoding\n");
      return true;
    }
    if (!isBound(serial)) {
      res.writeHead(404, { "content-type": "text/plain" }).end("no such device on this worker\n");
      return true;
    }
    let entry = recent.get(serial);
    if (!entry || Date.now() - entry.at > CACHE_MS) {
      entry = { at: Date.now(), jpeg: capture(serial) };
      recent.set(serial, entry);
    }
    entry.jpeg.then(
      (jpeg) => res.writeHead(200, { "content-type": "image/jpeg", "cache-control": "no-store", "content-length": jpeg.byteLength }).end(jpeg),
      (e: unknown) => {
        recent.delete(serial);
        res.writeHead(502, { "content-type": "text/plain" }).end(`${coerceError(e).message.slice(0, 300)}\n`);
      },
    );
    return true;
  };
}
