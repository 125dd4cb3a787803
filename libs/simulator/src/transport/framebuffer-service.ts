import { sleep, type DeviceBackend } from "./backend.ts";
import type { AdbStream } from "./stream.ts";

/** Latency class the simulated Android is asked about for `framebuffer:` requests. */
export const FRAMEBUFFER_COMMAND_CLASS = "framebuffer";

/** 52-byte header: 13 u32 LE (version, bpp, size, w, h, then red/blue/green/alpha offset+length). §4.7 */
export function framebufferHeader(width: number, height: number): Buffer {
  const fields = [1, 32, width * height * 4, width, height, 0, 8, 16, 8, 8, 8, 24, 8];
  const b = Buffer.alloc(fields.length * 4);
  fields.forEach((v, i) => b.writeUInt32LE(v >>> 0, i * 4));
  return b;
}

export function startFramebuffer(backend: DeviceBackend, stream: AdbStream): void {
  void (async () => {
    await sleep(backend.faults.latencyMs(FRAMEBUFFER_COMMAND_CLASS), stream.signal);
    if (stream.isClosed) return;
    const fb = backend.framebuffer();
    stream.write(framebufferHeader(fb.width, fb.height));
    stream.write(fb.rgba.subarray(0, fb.width * fb.height * 4));
    stream.close();
  })().catch(() => stream.close());
}
