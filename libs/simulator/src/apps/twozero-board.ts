/** Classic 2048 rules on a 4x4 grid, pure functions (grid[row][col], row 0 at the top, 0 = empty). */
import type { SeededRandom } from "../android/system/rng.ts";

export type Grid = number[][];
/** 0 up, 1 right, 2 down, 3 left (the AndroidEnv task's `direction` extra). */
export type Direction = 0 | 1 | 2 | 3;
export const GRID_SIZE = 4;

export function emptyGrid(): Grid {
  return Array.from({ length: GRID_SIZE }, () => Array<number>(GRID_SIZE).fill(0));
}

/** Slides one line toward index 0, merging equal neighbours once; returns the line and points gained. */
function slideLine(line: number[]): { line: number[]; gained: number } {
  const tiles = line.filter((v) => v !== 0);
  const out: number[] = [];
  let gained = 0;
  for (let i = 0; i < tiles.length; i++) {
    if (i + 1 < tiles.length && tiles[i] === tiles[i + 1]) {
      out.push(tiles[i]! * 2);
      gained += tiles[i]! * 2;
      i++;
    } else out.push(tiles[i]!);
  }
  while (out.length < line.length) out.push(0);
  return { line: out, gained };
}

/** Cells of line k in the order tiles travel toward (first = the edge they slide to). */
function lineCells(dir: Direction, k: number): [number, number][] {
  const idx = [0, 1, 2, 3];
  switch (dir) {
    case 0:
      return idx.map((i) => [i, k]);
    case 2:
      return idx.map((i) => [GRID_SIZE - 1 - i, k]);
    case 3:
      return idx.map((i) => [k, i]);
    case 1:
      return idx.map((i) => [k, GRID_SIZE - 1 - i]);
  }
}

export function slide(grid: Grid, dir: Direction): { grid: Grid; gained: number; moved: boolean } {
  const next = emptyGrid();
  let gained = 0;
  let moved = false;
  for (let k = 0; k < GRID_SIZE; k++) {
    const cells = lineCells(dir, k);
    const before = cells.map(([r, c]) => grid[r]![c]!);
    const r = slideLine(before);
    gained += r.gained;
    cells.forEach(([row, col], i) => {
      next[row]![col] = r.line[i]!;
      if (r.line[i] !== before[i]) moved = true;
    });
  }
  return { grid: next, gained, moved };
}

export function canMove(grid: Grid): boolean {
  return ([0, 1, 2, 3] as Direction[]).some((d) => slide(grid, d).moved);
}

/** Puts a 2 (90 %) or a 4 (10 %) on a random empty cell; no-op on a full grid. */
export function spawnTile(grid: Grid, rng: SeededRandom): void {
  const empty: [number, number][] = [];
  grid.forEach((row, r) => row.forEach((v, c) => v === 0 && empty.push([r, c])));
  if (empty.length === 0) return;
  const [r, c] = rng.pick(empty);
  grid[r]![c] = rng.next() < 0.9 ? 2 : 4;
}

/** Python-literal form used in the `extra: grid …` line, e.g. `[[0, 2, 0, 0], …]`. */
export function gridLiteral(grid: Grid): string {
  return `[${grid.map((row) => `[${row.join(", ")}]`).join(", ")}]`;
}
