/**
 * The body of a frame thread (a worker_threads Worker, see frame-threads.ts): captures framebuffers from the
 * adb server and encodes them, so neither the 8 MB transfer nor the encoding runs on the worker's event loop.
 * Per request it posts `captured` (size, and the RGBA pixels when asked for, transferred, not copied), then
 * `encoded` (the bytes) when an encoding was asked for, or `error`.
 */
import { parentPort } from "node:worker_threads";
import { encodeFrame, type FrameSpec } from "@farm/frames";
import { CaptureError, captureFramebuffer } from "./framebuffer-socket.ts";

export interface FrameThreadRequest {
  id: number;
  host: string;
  port: number;
  serial: string;
  timeoutMs: number;
  raw: boolean;
  spec?: FrameSpec;
}

export type FrameThreadReply =
  | { id: number; kind: "captured"; width: number; height: number; rgba?: Uint8Array }
  | { id: number; kind: "encoded"; bytes: Uint8Array }
  | { id: number; kind: "error"; stage: "capture" | "encode"; status: string; message: string };

async function handle(req: FrameThreadRequest, post: (r: FrameThreadReply, transfer?: ArrayBuffer[]) => void): Promise<void> {
  let shot;
  try {
    shot = await captureFramebuffer(req.host, req.port, req.serial, req.timeoutMs);
  } catch (e) {
    const status = e instanceof CaptureError ? e.status : "internal_error";
    post({ id: req.id, kind: "error", stage: "capture", status, message: e instanceof Error ? e.message : String(e) });
    return;
  }
  const { width, height, rgba } = shot;
  if (req.raw) {
    // The caller gets its own pixels; this thread keeps the original for the encoder when it needs it.
    const mine = req.spec ? new Uint8Array(rgba) : rgba;
    post({ id: req.id, kind: "captured", width, height, rgba: mine }, [mine.buffer as ArrayBuffer]);
  } else post({ id: req.id, kind: "captured", width, height });
  if (!req.spec) return;
  try {
    const bytes = await encodeFrame({ width, height, channels: 4, data: rgba }, req.spec);
    const own = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength).slice();
    post({ id: req.id, kind: "encoded", bytes: own }, [own.buffer]);
  } catch (e) {
    post({ id: req.id, kind: "error", stage: "encode", status: "internal_error", message: e instanceof Error ? e.message : String(e) });
  }
}

const port = parentPort;
if (port) {
  port.on("message", (req: FrameThreadRequest) => {
    void handle(req, (r, transfer) => port.postMessage(r, transfer ?? []));
  });
}
