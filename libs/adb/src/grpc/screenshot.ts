/**
 * Screens over the emulator's gRPC: `getScreenshot` in RGBA8888 or RGB888, optionally scaled by the emulator,
 * with the pixels in the answer or, given shared frame regions, through the emulator's MMAP transport
 * (shared-frames.ts); trouble as a status.
 */
import { ImgFormat, TransportChannel, type ImageMsg } from "@farm/emulator-grpc";
import type { Screenshot, StepStatus } from "../types.ts";
import { describeGrpcError, emulatorCalls } from "./client.ts";
import type { GrpcEndpoint } from "./endpoints.ts";
import type { FrameRegions, Region } from "./shared-frames.ts";

export interface GrpcPixels {
  width: number;
  height: number;
  channels: 3 | 4;
  /** Row-major pixels, exactly width*height*channels bytes. */
  data: Uint8Array;
  /** Present when `data` lives in a shared region's reused buffer: call once done with it (then it is gone). */
  release?: () => void;
}

export interface PixelsRequest {
  /** 4: RGBA8888, 3: RGB888 (a smaller transfer when nobody needs alpha). */
  channels: 3 | 4;
  /** Have the emulator scale the screen to fit this box. */
  size?: { width: number; height: number };
  /** Take the pixels through shared memory (an emulator on this host). */
  regions?: FrameRegions;
}

type Trouble = { status: StepStatus; message: string };

/**
 * What this thread learned of the MMAP transport per endpoint and request shape: the bytes a frame takes (the
 * region must hold them before the call) and whether the emulator writes regions at all.
 */
const shared = new Map<string, { bytes: number; off: boolean }>();
const MAX_SHARED_ENTRIES = 4096;

export async function grpcPixels(serial: string, ep: GrpcEndpoint, timeoutMs: number, req: PixelsRequest): Promise<GrpcPixels | Trouble> {
  const format = req.channels === 3 ? ImgFormat.RGB888 : ImgFormat.RGBA8888;
  const ask = { format, width: req.size?.width ?? 0, height: req.size?.height ?? 0 };
  const key = `${ep.address} ${format} ${ask.width}x${ask.height}`;
  const known = req.regions ? shared.get(key) : undefined;
  let tried: Region | undefined;
  if (req.regions && known && !known.off) {
    const regions = req.regions;
    tried = regions.acquire(known.bytes);
    if (tried) {
      const got = await viaRegion(serial, ep, timeoutMs, ask, req.channels, regions, tried, known);
      if (got !== undefined) return got;
    }
  }
  const r = await emulatorCalls.getScreenshot(ep, ask, timeoutMs);
  if (!r.ok) return describeGrpcError(r.err, "screenshot", serial, ep);
  const px = pixelsOf(r.value, req.channels, serial, ep);
  if (req.regions && "data" in px) learn(key, ep.address, px.data.byteLength, tried);
  return px;
}

/** One call through a region; undefined when the emulator wrote neither the region nor pixels (ask again for pixels). */
async function viaRegion(
  serial: string, ep: GrpcEndpoint, timeoutMs: number, ask: { format: number; width: number; height: number }, channels: 3 | 4,
  regions: FrameRegions, region: Region, known: { off: boolean },
): Promise<GrpcPixels | Trouble | undefined> {
  const r = await emulatorCalls.getScreenshot(ep, { ...ask, transport: { channel: TransportChannel.MMAP, handle: region.handle } }, timeoutMs);
  if (!r.ok) {
    // The emulator may still write this region after our deadline: never hand it to another capture.
    regions.discard(region);
    return describeGrpcError(r.err, "screenshot", serial, ep);
  }
  const img = r.value;
  const t = img.format.transport;
  if (t?.channel === TransportChannel.MMAP && t.handle === region.handle) {
    const shape = shapeOf(img, channels, serial, ep);
    if ("message" in shape || shape.bytes > region.size) {
      regions.release(region);
      if ("message" in shape) return shape;
      return { status: "internal_error", message: `screenshot on '${serial}' (emulator gRPC ${ep.address}): ${shape.width}x${shape.height} does not fit the ${region.size}-byte region it was written to` };
    }
    try {
      const data = regions.read(region, shape.bytes);
      return { width: shape.width, height: shape.height, channels, data, release: () => regions.release(region) };
    } catch (e) {
      regions.discard(region);
      return { status: "internal_error", message: `screenshot on '${serial}': ${e instanceof Error ? e.message : String(e)}` };
    }
  }
  regions.release(region);
  if (img.image.byteLength === 0) return undefined;
  // An emulator that ignores the transport: pixels in the answer from now on.
  known.off = true;
  sharedFramesOff?.(ep.address, "the emulator ignores the MMAP transport");
  return pixelsOf(img, channels, serial, ep);
}

/** After a call with pixels in the answer: remember a frame's size, and give up on regions the emulator did not write. */
function learn(key: string, address: string, bytes: number, tried: Region | undefined): void {
  const k = shared.get(key);
  if (!k) {
    if (shared.size >= MAX_SHARED_ENTRIES) shared.clear();
    shared.set(key, { bytes, off: false });
  } else if (tried && bytes <= tried.size) {
    k.off = true;
    sharedFramesOff?.(address, "the emulator could not open the region (it does not share this host's /dev/shm)");
  } else k.bytes = bytes;
}

let sharedFramesOff: ((address: string, reason: string) => void) | undefined;

/** Told once per endpoint and request shape found unable to take frames through shared memory (for a log line). */
export function onSharedFramesOff(cb: (address: string, reason: string) => void): void {
  sharedFramesOff = cb;
}

function shapeOf(img: ImageMsg, channels: 3 | 4, serial: string, ep: GrpcEndpoint): { width: number; height: number; bytes: number } | Trouble {
  const width = img.format?.width || img.width;
  const height = img.format?.height || img.height;
  if (!(width > 0 && height > 0)) return { status: "internal_error", message: `screenshot on '${serial}' (emulator gRPC ${ep.address}): no size in the answer (${width}x${height})` };
  return { width, height, bytes: width * height * channels };
}

function pixelsOf(img: ImageMsg, channels: 3 | 4, serial: string, ep: GrpcEndpoint): GrpcPixels | Trouble {
  const shape = shapeOf(img, channels, serial, ep);
  if ("message" in shape) return shape;
  const data = img.image;
  if (data.byteLength < shape.bytes) {
    return { status: "internal_error", message: `screenshot on '${serial}' (emulator gRPC ${ep.address}): ${shape.width}x${shape.height} ${channels === 3 ? "RGB888" : "RGBA8888"} with ${data.byteLength} bytes` };
  }
  return { width: shape.width, height: shape.height, channels, data: new Uint8Array(data.buffer, data.byteOffset, shape.bytes) };
}

/** `getScreenshot(RGBA8888)` with the pixels in the answer (the driver's `screenshot()`). */
export async function grpcScreenshot(serial: string, ep: GrpcEndpoint, timeoutMs: number): Promise<Screenshot | Trouble> {
  const r = await grpcPixels(serial, ep, timeoutMs, { channels: 4 });
  return "data" in r ? { width: r.width, height: r.height, rgba: r.data } : r;
}
