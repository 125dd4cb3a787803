/**
 * The body of a frame thread (a worker_threads Worker, see frame-threads.ts): captures screens (the emulator's
 * gRPC getScreenshot, through shared memory when it runs on this host, or the adb server's framebuffer) and
 * encodes them, so neither the 6-8 MB transfer nor the encoding runs on the worker's event loop.
 * Per request it posts `captured` (size, and the RGBA pixels when asked for, transferred, not copied), then
 * `encoded` (the bytes) when an encoding was asked for, or `error`.
 */
import { parentPort } from "node:worker_threads";
import { encodeFrame, rgbaToRgb, type FrameSpec, type RawFrame } from "@farm/frames";
import { CaptureError, captureFramebuffer } from "./framebuffer-socket.ts";
import { grpcPixels, onSharedFramesOff } from "./grpc/screenshot.ts";
import { FrameRegions } from "./grpc/shared-frames.ts";
import type { GrpcEndpoint } from "./grpc/endpoints.ts";

let regions: FrameRegions | undefined;

/** 4 when the caller takes RGBA pixels, else 3 (RGB pixels, or only the stored frame). */
const rawChannels = (req: FrameThreadRequest): 3 | 4 => (req.raw && req.rawFormat !== "rgb" ? 4 : 3);

/**
 * gRPC getScreenshot: RGBA8888 when the caller takes RGBA pixels, else RGB888 (a quarter less to move, and no
 * alpha to strip before the encode); scaled by the emulator when only a smaller stored frame is wanted;
 * through shared memory when the emulator is on this host.
 */
async function captureGrpc(req: FrameThreadRequest, ep: GrpcEndpoint): Promise<Shot> {
  const size = !req.raw && req.spec?.size ? req.spec.size : undefined;
  if (req.sharedFrames) regions ??= new FrameRegions();
  const r = await grpcPixels(req.serial, ep, req.timeoutMs, { channels: rawChannels(req), ...(size ? { size } : {}), ...(req.sharedFrames ? { regions } : {}) });
  if ("data" in r) return r;
  throw new CaptureError(r.status, r.message);
}

/** A captured frame; `release` (shared memory) once its pixels are no longer needed. */
type Shot = RawFrame & { release?: () => void };

async function captureAdb(req: FrameThreadRequest): Promise<Shot> {
  const shot = await captureFramebuffer(req.host, req.port, req.serial, req.timeoutMs);
  return { width: shot.width, height: shot.height, channels: 4, data: shot.rgba };
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
  /** With `grpc`: try the emulator's MMAP transport (the endpoint is on this host). */
  sharedFrames?: boolean;
  /** With `raw`: the pixels' layout (default rgba). */
  rawFormat?: "rgba" | "rgb";
}

export type FrameThreadReply =
  | { id: 0; kind: "shared-frames-off"; endpoint: string; reason: string }
  | { id: number; kind: "captured"; width: number; height: number; rgba?: Uint8Array; rgb?: Uint8Array }
  | { id: number; kind: "encoded"; bytes: Uint8Array }
  | { id: number; kind: "error"; stage: "capture" | "encode"; status: string; message: string };

async function handle(req: FrameThreadRequest, post: (r: FrameThreadReply, transfer?: ArrayBuffer[]) => void): Promise<void> {
  let shot: Shot;
  try {
    shot = req.grpc ? await captureGrpc(req, req.grpc) : await captureAdb(req);
  } catch (e) {
    const status = e instanceof CaptureError ? e.status : "internal_error";
    post({ id: req.id, kind: "error", stage: "capture", status, message: e instanceof Error ? e.message : String(e) });
    return;
  }
  const { width, height } = shot;
  if (req.raw) {
    const mine = ownPixels(req, shot);
    post({ id: req.id, kind: "captured", width, height, [req.rawFormat === "rgb" ? "rgb" : "rgba"]: mine }, [mine.buffer as ArrayBuffer]);
  } else post({ id: req.id, kind: "captured", width, height });
  try {
    if (req.spec) await encodeTo(req.id, shot, req.spec, post);
  } finally {
    shot.release?.();
  }
}

/**
 * The caller's own pixels in the layout it asked for, moved not copied when they fill their whole memory (a
 * framebuffer read); a copy when the encoder still needs them, they share memory (a view into a gRPC message)
 * or they are a shared region's reused buffer; converted here (off the event loop) when the capture is RGBA
 * and the caller wants RGB.
 */
function ownPixels(req: FrameThreadRequest, shot: Shot): Uint8Array {
  const { width, height, data } = shot;
  if (req.rawFormat === "rgb" && shot.channels === 4) return rgbaToRgb(data, width, height);
  const whole = data.byteOffset === 0 && data.byteLength === data.buffer.byteLength && !(data.buffer instanceof SharedArrayBuffer);
  return req.spec || !whole || shot.release ? new Uint8Array(data) : data;
}

async function encodeTo(id: number, shot: RawFrame, spec: FrameSpec, post: (r: FrameThreadReply, transfer?: ArrayBuffer[]) => void): Promise<void> {
  try {
    const bytes = await encodeFrame(shot, spec);
    const own = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength).slice();
    post({ id, kind: "encoded", bytes: own }, [own.buffer]);
  } catch (e) {
    post({ id, kind: "error", stage: "encode", status: "internal_error", message: e instanceof Error ? e.message : String(e) });
  }
}

const port = parentPort;
if (port) {
  onSharedFramesOff((endpoint, reason) => port.postMessage({ id: 0, kind: "shared-frames-off", endpoint, reason } satisfies FrameThreadReply));
  port.on("message", (req: FrameThreadRequest) => {
    void handle(req, (r, transfer) => port.postMessage(r, transfer ?? []));
  });
}
