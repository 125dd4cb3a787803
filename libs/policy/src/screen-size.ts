/** The screen as shown: width and height swap in landscape (orientation 1 and 3). x, y and element bounds use this frame. */
export function shownScreenSize(natural: { width: number; height: number }, orientation: 0 | 1 | 2 | 3 = 0): { width: number; height: number } {
  return orientation % 2 === 1 ? { width: natural.height, height: natural.width } : { width: natural.width, height: natural.height };
}
