/** `getScreenshot(RGBA8888)` over the emulator's gRPC, optionally scaled by the emulator; trouble as a status. */
import { ImgFormat } from "@farm/emulator-grpc";
import type { Screenshot, StepStatus } from "../types.ts";
import { describeGrpcError, emulatorCalls } from "./client.ts";
import type { GrpcEndpoint } from "./endpoints.ts";

export async function grpcScreenshot(serial: string, ep: GrpcEndpoint, timeoutMs: number, size?: { width: number; height: number }): Promise<Screenshot | { status: StepStatus; message: string }> {
  const r = await emulatorCalls.getScreenshot(ep, { format: ImgFormat.RGBA8888, width: size?.width ?? 0, height: size?.height ?? 0 }, timeoutMs);
  if (!r.ok) return describeGrpcError(r.err, "screenshot", serial, ep);
  const img = r.value;
  const width = img.format?.width || img.width;
  const height = img.format?.height || img.height;
  const data = img.image;
  if (!(width > 0 && height > 0) || data.byteLength < width * height * 4) {
    return { status: "internal_error", message: `screenshot on '${serial}' (emulator gRPC ${ep.address}): ${width}x${height} RGBA8888 with ${data.byteLength} bytes` };
  }
  return { width, height, rgba: new Uint8Array(data.buffer, data.byteOffset, width * height * 4) };
}
