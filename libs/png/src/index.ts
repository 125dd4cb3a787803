/**
 * @module @farm/png
 * Encode 8-bit RGB or RGBA pixels to PNG with node:zlib alone.
 *
 *   const png = encodeRgbaPng(width, height, rgba); // Buffer
 *   const small = encodeRgbPng(width, height, rgb, { level: 9 });
 */
export { encodeRgbPng, encodeRgbaPng, type PngOptions } from "./png.ts";
