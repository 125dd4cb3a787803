/** Pixel layout conversions on the hot path, written for V8: 32-bit reads, one pass, no per-pixel allocation. */

const littleEndian = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** RGBA (4 bytes per pixel) to RGB (3), e.g. a framebuffer for a policy that takes RGB. */
export function rgbaToRgb(rgba: Uint8Array, width: number, height: number): Uint8Array {
  const n = width * height;
  if (rgba.byteLength < n * 4) throw new Error(`RGBA data short: ${rgba.byteLength} bytes for ${width}x${height}`);
  const rgb = new Uint8Array(n * 3);
  if (littleEndian && rgba.byteOffset % 4 === 0) {
    const src = new Uint32Array(rgba.buffer, rgba.byteOffset, n);
    for (let i = 0, j = 0; i < n; i++, j += 3) {
      const px = src[i]!;
      rgb[j] = px & 0xff;
      rgb[j + 1] = (px >>> 8) & 0xff;
      rgb[j + 2] = (px >>> 16) & 0xff;
    }
    return rgb;
  }
  for (let i = 0, j = 0; j < rgb.length; i += 4, j += 3) {
    rgb[j] = rgba[i]!;
    rgb[j + 1] = rgba[i + 1]!;
    rgb[j + 2] = rgba[i + 2]!;
  }
  return rgb;
}
