/**
 * The body of a frame thread (a worker_threads Worker, see frame-threads.ts): captures framebuffers from the
 * adb server and encodes them, so neither the 8 MB transfer nor the encoding runs on the worker's event loop.
 * Per request it posts `captured` (size, and the RGBA pixels when asked for, transferred, not copied), then
 * `encoded` (the bytes) when an encoding was asked for, or `error`.
 */
import { parentPort } from "node:worker_threads";
import { encodeFrame, type FrameSpec } from "@farm/frames";
import { CaptureError, captureFramebuffer } from "./framebuffer-socket.ts";
import { grpcScreenshot } from "./grpc/screenshot.ts";
import type { GrpcEndpoint } from "./grpc/endpoints.ts";
import type { Screenshot } from "./types.ts";

/** gRPC getScreenshot(RGBA8888); scaled by the emulator when only a smaller stored frame is wanted. */
async function captureGrpc(req: FrameThreadRequest, ep: GrpcEndpoint): Promise<Screenshot> {
  const size = !req.raw && req.spec?.size ? req.spec.size : undefined;
  const r = await grpcScreenshot(req.serial, ep, req.timeoutMs, size);
  if ("rgba" in r) return r;
  throw new CaptureError(r.status, r.message);
}

export interface FrameThreadRequest {
  id: number;
  host: string;
  port: number;
  serial: string;
  timeoutMs: number;
  raw: boolean;
  spec?: FrameSpec;
  /** Capture over the emulator's gRPC (`getScreenshot`) instead of the adb server's `framebuffer:`. */
  grpc?: GrpcEndpoint;
}

export type FrameThreadReply =
  | { id: number; kind: "captured"; width: number; height: number; rgba?: Uint8Array }
  | { id: number; kind: "encoded"; bytes: Uint8Array }
  | { id: number; kind: "error"; stage: "capture" | "encode"; status: string; message: string };

async function handle(req: FrameThreadRequest, post: (r: FrameThreadReply, transfer?: ArrayBuffer[]) => void): Promise<void> {
  let shot;
  try {
    shot = req.grpc ? await captureGrpc(req, req.grpc) : await captureFramebuffer(req.host, req.port, req.serial, req.timeoutMs);
  } catch (e) {
    const status = e instanceof CaptureError ? e.status : "internal_error";
    post({ id: req.id, kind: "error", stage: "capture", status, message: e instanceof Error ? e.message : String(e) });
    return;
  }
  const { width, height, rgba } = shot;
  if (req.raw) {
    // The caller gets its own pixels, moved not copied when they fill their whole memory (a framebuffer read);
    // a copy when the encoder still needs them or they share memory (a view into a decoded gRPC message).
    const whole = rgba.byteOffset === 0 && rgba.byteLength === rgba.buffer.byteLength && !(rgba.buffer instanceof SharedArrayBuffer);
    const mine = req.spec || !whole ? new Uint8Array(rgba) : rgba;
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
