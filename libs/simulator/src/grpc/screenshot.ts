/**
 * getScreenshot's image: the display frame (already turned by the rotation) in the asked format,
 * scaled when the request names a width and/or height (aspect ratio kept, as the emulator does:
 * the image fits inside the asked box; one side given → the other follows).
 */
import { encodeRgbaPng } from "@farm/png";
import { ImgFormat } from "@farm/emulator-grpc";
import { rgbaToRgb } from "@farm/frames/pixels";

export interface Frame {
  width: number;
  height: number;
  rgba: Uint8Array;
}

export function targetSize(frame: { width: number; height: number }, askW: number, askH: number): { width: number; height: number } {
  if (!askW && !askH) return { width: frame.width, height: frame.height };
  const scale = askW && askH ? Math.min(askW / frame.width, askH / frame.height) : askW ? askW / frame.width : askH / frame.height;
  return { width: Math.max(1, Math.round(frame.width * scale)), height: Math.max(1, Math.round(frame.height * scale)) };
}

/** Nearest-neighbour scaling (cheap; screenshots for agents are usually downscaled). */
export function scaleFrame(frame: Frame, width: number, height: number): Frame {
  if (width === frame.width && height === frame.height) return frame;
  const src = new Uint32Array(frame.rgba.buffer, frame.rgba.byteOffset, frame.width * frame.height);
  const bytes = new Uint8Array(width * height * 4);
  const dst = new Uint32Array(bytes.buffer);
  const xs = new Uint32Array(width);
  for (let x = 0; x < width; x++) xs[x] = Math.min(frame.width - 1, Math.floor(((x + 0.5) * frame.width) / width));
  for (let y = 0; y < height; y++) {
    const sy = Math.min(frame.height - 1, Math.floor(((y + 0.5) * frame.height) / height)) * frame.width;
    const row = y * width;
    for (let x = 0; x < width; x++) dst[row + x] = src[sy + xs[x]!]!;
  }
  return { width, height, rgba: bytes };
}

/**
 * The image bytes for a format: RGBA8888 is the frame itself (no copy); RGB888 is converted into `rgbInto`
 * when given (a reused buffer: the caller sends the bytes before the next frame), else a new array.
 */
export function encodeImage(frame: Frame, format: number, rgbInto?: Uint8Array): Uint8Array {
  const pixels = frame.width * frame.height;
  if (format === ImgFormat.RGB888) return rgbaToRgb(frame.rgba, frame.width, frame.height, rgbInto && rgbInto.byteLength >= pixels * 3 ? rgbInto : undefined);
  if (format === ImgFormat.PNG) return encodeRgbaPng(frame.width, frame.height, frame.rgba);
  return frame.rgba.byteLength === pixels * 4 ? frame.rgba : frame.rgba.subarray(0, pixels * 4);
}
