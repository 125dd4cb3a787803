/**
 * The display's orientation. Apps render in the natural (portrait) frame; the display shows that
 * frame turned by the rotation (1: 90°, the device turned left → landscape; 2: 180°; 3: 270°), so
 * screencap, the framebuffer and gRPC screenshots of a rotated device are landscape, and touches
 * in display coordinates are mapped back to the natural frame before they reach the app.
 */
export type Rotation = 0 | 1 | 2 | 3;

export function displaySize(width: number, height: number, rotation: Rotation): { width: number; height: number } {
  return rotation % 2 === 1 ? { width: height, height: width } : { width, height };
}

/** The natural-frame point under display point (x, y); width/height are the natural frame's. */
export function displayToNatural(x: number, y: number, width: number, height: number, rotation: Rotation): { x: number; y: number } {
  switch (rotation) {
    case 0:
      return { x, y };
    case 1:
      return { x: width - 1 - y, y: x };
    case 2:
      return { x: width - 1 - x, y: height - 1 - y };
    case 3:
      return { x: y, y: height - 1 - x };
  }
}

/** The display point showing natural-frame point (x, y): the inverse of displayToNatural. */
export function naturalToDisplay(x: number, y: number, width: number, height: number, rotation: Rotation): { x: number; y: number } {
  switch (rotation) {
    case 0:
      return { x, y };
    case 1:
      return { x: y, y: width - 1 - x };
    case 2:
      return { x: width - 1 - x, y: height - 1 - y };
    case 3:
      return { x: height - 1 - y, y: x };
  }
}

/** The natural RGBA frame as the display shows it (a new buffer unless rotation is 0). */
export function rotateFrame(rgba: Uint8Array, width: number, height: number, rotation: Rotation): { width: number; height: number; rgba: Uint8Array } {
  if (rotation === 0) return { width, height, rgba };
  const out = displaySize(width, height, rotation);
  const src = new Uint32Array(rgba.buffer, rgba.byteOffset, width * height);
  const dstBytes = new Uint8Array(width * height * 4);
  const dst = new Uint32Array(dstBytes.buffer);
  for (let dy = 0; dy < out.height; dy++) {
    for (let dx = 0; dx < out.width; dx++) {
      const n = displayToNatural(dx, dy, width, height, rotation);
      dst[dy * out.width + dx] = src[n.y * width + n.x]!;
    }
  }
  return { width: out.width, height: out.height, rgba: dstBytes };
}
