/** Pixel layout conversions on the hot path, written for V8: 32-bit reads, one pass, no per-pixel allocation. */

const littleEndian = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * RGBA (4 bytes per pixel) to RGB (3), e.g. a framebuffer for a policy that takes RGB. Into `into` when given
 * (at least width*height*3 bytes; a reused buffer saves allocating and zeroing a frame), else a new array.
 */
export function rgbaToRgb(rgba: Uint8Array, width: number, height: number, into?: Uint8Array): Uint8Array {
  const n = width * height;
  if (rgba.byteLength < n * 4) throw new Error(`RGBA data short: ${rgba.byteLength} bytes for ${width}x${height}`);
  if (into && into.byteLength < n * 3) throw new Error(`RGB buffer short: ${into.byteLength} bytes for ${width}x${height}`);
  const rgb = into ? into.subarray(0, n * 3) : new Uint8Array(n * 3);
  if (littleEndian && rgba.byteOffset % 4 === 0 && rgb.byteOffset % 4 === 0) {
    const src = new Uint32Array(rgba.buffer, rgba.byteOffset, n);
    // Four pixels in, three 32-bit words out: 3 stores instead of 12.
    const out = new Uint32Array(rgb.buffer, rgb.byteOffset, Math.floor(n / 4) * 3);
    const whole = n - (n % 4);
    for (let i = 0, o = 0; i < whole; i += 4, o += 3) {
      const p0 = src[i]!;
      const p1 = src[i + 1]!;
      const p2 = src[i + 2]!;
      const p3 = src[i + 3]!;
      out[o] = (p0 & 0xffffff) | (p1 << 24);
      out[o + 1] = ((p1 >>> 8) & 0xffff) | (p2 << 16);
      out[o + 2] = ((p2 >>> 16) & 0xff) | (p3 << 8);
    }
    for (let i = whole, j = whole * 3; i < n; i++, j += 3) {
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
