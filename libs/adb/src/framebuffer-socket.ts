/**
 * One `framebuffer:` capture over the adb server's smart-socket protocol, on a plain socket: `host:transport:<serial>`,
 * `framebuffer:`, the 52-byte header, then exactly `size` bytes read into one buffer allocated from the header
 * (no chunk list, no concatenation). Used by the frame threads (frame-thread.ts), off the event loop.
 */
import { framebufferToRgba, type FramebufferHeader } from "./screenshot.ts";
import { openService } from "./smart-socket.ts";
import type { Screenshot, StepStatus } from "./types.ts";
import { FarmError } from "@farm/errors";

export class CaptureError extends FarmError<"capture_failed"> {
  /** a later try can succeed (transient): retryable. */
  constructor(
    readonly status: StepStatus,
    message: string,
  ) {
    super("capture_failed", message, { retryable: true });
  }
}

/** 8K RGBA: a header claiming more is broken, not a bigger screen. */
export const MAX_FRAMEBUFFER_BYTES = 7680 * 4320 * 4;

function parseHeader(b: Buffer): FramebufferHeader {
  const f = (i: number) => b.readUInt32LE(4 + i * 4);
  return {
    bpp: f(0),
    size: f(1),
    width: f(2),
    height: f(3),
    red_offset: f(4),
    red_length: f(5),
    blue_offset: f(6),
    blue_length: f(7),
    green_offset: f(8),
    green_length: f(9),
    alpha_offset: f(10),
    alpha_length: f(11),
  };
}

/** Captures the screen of `serial` through the adb server at host:port within `timeoutMs`; rejects with a CaptureError. */
export function captureFramebuffer(host: string, port: number, serial: string, timeoutMs: number): Promise<Screenshot> {
  const where = `adb server ${host}:${port}`;
  return new Promise<Screenshot>((resolve, reject) => {
    let finished = false;
    let pending: Buffer = Buffer.alloc(0);
    let header: FramebufferHeader | undefined;
    let out: Buffer | undefined;
    let at = 0;
    const settle = (): void => {
      finished = true;
      clearTimeout(timer);
      sock.destroy();
    };
    const fail = (status: StepStatus, message: string) => {
      if (finished) return;
      settle();
      reject(new CaptureError(status, message));
    };
    const timer = setTimeout(() => fail("timeout", `framebuffer of '${serial}': no answer from ${where} within ${timeoutMs} ms`), timeoutMs);
    const done = () => {
      settle();
      const shot = framebufferToRgba(header!, out!.subarray(0, at));
      if (typeof shot === "string") reject(new CaptureError("internal_error", `framebuffer of '${serial}': ${shot}`));
      else resolve(shot);
    };
    /** The 52-byte header, then exactly its `size` bytes into one buffer. */
    const take = (b: Buffer): void => {
      if (finished) return;
      if (out) {
        const n = Math.min(b.length, out.length - at);
        b.copy(out, at, 0, n);
        at += n;
        if (at === out.length) done();
        return;
      }
      pending = pending.length ? Buffer.concat([pending, b]) : b;
      if (pending.length < 52) return;
      const version = pending.readUInt32LE(0);
      if (version !== 1 && version !== 2) return fail("internal_error", `framebuffer of '${serial}': unsupported header version ${version}`);
      header = parseHeader(pending);
      const size = header.size;
      if (!(size > 0 && size <= MAX_FRAMEBUFFER_BYTES)) return fail("internal_error", `framebuffer of '${serial}': implausible size ${size} bytes`);
      // Its own memory (never the shared pool): the frame thread hands it to the caller by transfer.
      out = Buffer.allocUnsafeSlow(size);
      const rest = pending.subarray(52);
      pending = Buffer.alloc(0);
      if (rest.length) take(rest);
    };
    const sock = openService(host, port, serial, "framebuffer:", {
      started: () => undefined,
      data: take,
      failed: (e: NodeJS.ErrnoException, stage) => {
        if (stage === "transport") fail("adb_error", `device '${serial}' ${/not found/.test(e.message) ? "not found on" : "refused by"} ${where}: ${e.message}`);
        else if (stage === "service") fail("internal_error", `framebuffer of '${serial}' refused: ${e.message}`);
        else if (e.name === "PrematureEOFError") fail("adb_error", `framebuffer of '${serial}': ${where} closed the connection`);
        else fail("adb_error", `framebuffer of '${serial}': ${where} ${e.code === "ECONNREFUSED" ? "is not running (connection refused)" : e.message}`);
      },
      ended: () => {
        if (out && at < out.length) fail("adb_error", `device '${serial}' went away during the framebuffer transfer (${at} of ${out.length} bytes)`);
        else fail("adb_error", `framebuffer of '${serial}': ${where} closed the connection`);
      },
    });
  });
}
