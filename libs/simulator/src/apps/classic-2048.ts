/**
 * Classic 2048 (`com.tpcstld.twozerogame/.MainActivity`), turn-based. A swipe anywhere on the screen
 * moves the tiles. RL lines (tag AndroidRLTask): `score: <total>` when the score changes,
 * `extra: grid [[…4x4…]]` and `extra: direction [d]` after every move that changed the board, and
 * `episode end` once no move is possible. Tiles spawn from a RNG seeded with RL_TASK_GAME_CONFIG
 * `{"seed": N}` (default 2048), so every fresh start with the same inputs plays the same game.
 */
import { Canvas } from "../graphics/canvas.ts";
import { simRandom, type SeededRandom } from "../android/system/rng.ts";
import type { AppFactory, AppHost, SimApp, ViewNode } from "../android/app-contract.ts";
import { configSeed } from "./game-config.ts";
import { canMove, emptyGrid, gridLiteral, slide, spawnTile, GRID_SIZE, type Direction, type Grid } from "./twozero-board.ts";

export const TWENTY48_DEFAULT_SEED = 2048;

const TILE_COLORS: Record<number, number> = {
  0: 0xcdc1b4, 2: 0xeee4da, 4: 0xede0c8, 8: 0xf2b179, 16: 0xf59563, 32: 0xf67c5f, 64: 0xf65e3b,
  128: 0xedcf72, 256: 0xedcc61, 512: 0xedc850, 1024: 0xedc53f, 2048: 0xedc22e,
};

class Classic2048 implements SimApp {
  readonly activity = "MainActivity";
  private grid: Grid = emptyGrid();
  private score = 0;
  private over = false;
  private readonly rng: SeededRandom;

  constructor(private readonly host: AppHost) {
    this.rng = simRandom(configSeed(host.config, TWENTY48_DEFAULT_SEED));
    spawnTile(this.grid, this.rng);
    spawnTile(this.grid, this.rng);
    host.rl(`extra: grid ${gridLiteral(this.grid)}`);
  }

  /** Current board and score (tests and tools). */
  state(): { grid: Grid; score: number; over: boolean } {
    return { grid: this.grid.map((r) => [...r]), score: this.score, over: this.over };
  }

  onSwipe(x1: number, y1: number, x2: number, y2: number): void {
    const dx = x2 - x1;
    const dy = y2 - y1;
    const dir: Direction = Math.abs(dx) > Math.abs(dy) ? (dx > 0 ? 1 : 3) : dy > 0 ? 2 : 0;
    this.move(dir);
  }

  onKey(keycode: number): boolean {
    // D-pad: 19 up, 20 down, 21 left, 22 right.
    const dir = ({ 19: 0, 22: 1, 20: 2, 21: 3 } as Record<number, Direction>)[keycode];
    if (dir === undefined) return false;
    this.move(dir);
    return true;
  }

  private move(dir: Direction): void {
    if (this.over) return;
    const r = slide(this.grid, dir);
    if (!r.moved) return;
    this.grid = r.grid;
    spawnTile(this.grid, this.rng);
    if (r.gained > 0) {
      this.score += r.gained;
      this.host.rl(`score: ${this.score}`);
    }
    this.host.rl(`extra: grid ${gridLiteral(this.grid)}`);
    this.host.rl(`extra: direction [${dir}]`);
    if (!canMove(this.grid)) {
      this.over = true;
      this.host.rl("episode end");
    }
  }

  private layout(): { x: number; y: number; size: number; cell: number; gap: number } {
    const { width, height } = this.host.screen;
    const size = Math.floor(Math.min(width * 0.92, height * 0.6));
    const gap = Math.max(2, Math.floor(size * 0.03));
    const cell = (size - gap * (GRID_SIZE + 1)) / GRID_SIZE;
    return { x: Math.floor((width - size) / 2), y: Math.floor(height * 0.25), size, cell, gap };
  }

  render(c: Canvas): void {
    const { width, height } = this.host.screen;
    c.fill(0xfaf8ef);
    const scale = Math.max(1, Math.floor(width / 120));
    c.text(width * 0.05, height * 0.06, "2048", scale * 2, 0x776e65);
    c.rect(width * 0.55, height * 0.05, width * 0.4, height * 0.1, 0xbbada0);
    c.textCentered(width * 0.55, height * 0.05, width * 0.4, height * 0.05, "SCORE", scale, 0xeee4da);
    c.textCentered(width * 0.55, height * 0.095, width * 0.4, height * 0.05, String(this.score), scale, 0xffffff);
    const b = this.layout();
    c.rect(b.x, b.y, b.size, b.size, 0xbbada0);
    for (let r = 0; r < GRID_SIZE; r++) {
      for (let col = 0; col < GRID_SIZE; col++) {
        const v = this.grid[r]![col]!;
        const x = b.x + b.gap + col * (b.cell + b.gap);
        const y = b.y + b.gap + r * (b.cell + b.gap);
        c.rect(x, y, b.cell, b.cell, TILE_COLORS[v] ?? 0x3c3a32);
        if (v) {
          const text = String(v);
          const s = Math.max(1, Math.min(scale * 2, Math.floor((b.cell * 0.8) / Canvas.textWidth(text, 1))));
          c.textCentered(x, y, b.cell, b.cell, text, s, v <= 4 ? 0x776e65 : 0xf9f6f2);
        }
      }
    }
    if (this.over) c.textCentered(0, b.y + b.size + height * 0.03, width, height * 0.06, "GAME OVER", scale * 2, 0x776e65);
  }

  /**
   * The one custom view the game draws on, with what accessibility can say about it: the score and each
   * cell (its tile's value as text, empty when free), as virtual child views, row by row.
   */
  viewHierarchy(): ViewNode {
    const { width, height } = this.host.screen;
    const b = this.layout();
    const cells: ViewNode[] = [];
    for (let r = 0; r < GRID_SIZE; r++) {
      for (let col = 0; col < GRID_SIZE; col++) {
        const x = Math.round(b.x + b.gap + col * (b.cell + b.gap));
        const y = Math.round(b.y + b.gap + r * (b.cell + b.gap));
        const v = this.grid[r]![col]!;
        cells.push({ cls: "android.view.View", key: `cell/${r}/${col}`, bounds: [x, y, x + Math.round(b.cell), y + Math.round(b.cell)], text: v ? String(v) : "", desc: `Row ${r + 1}, column ${col + 1}` });
      }
    }
    const score: ViewNode = { cls: "android.view.View", key: "score", bounds: [Math.round(width * 0.55), Math.round(height * 0.05), Math.round(width * 0.95), Math.round(height * 0.15)], text: String(this.score), desc: "Score" };
    const scale = Math.max(1, Math.floor(width / 120));
    const title: ViewNode = { cls: "android.widget.TextView", key: "title", bounds: [Math.round(width * 0.05), Math.round(height * 0.06), Math.round(width * 0.5), Math.round(height * 0.06 + 14 * scale)], text: "2048" };
    const children: ViewNode[] = [title, score, { cls: "android.view.View", key: "board", bounds: [b.x, b.y, b.x + b.size, b.y + b.size], desc: "Game board", children: cells }];
    if (this.over) children.push({ cls: "android.view.View", key: "game_over", bounds: [0, Math.round(b.y + b.size + height * 0.03), width, Math.round(b.y + b.size + height * 0.09)], text: "GAME OVER" });
    return { cls: "com.tpcstld.twozerogame.MainView", id: "app:id/main_view", bounds: [0, 0, width, height], focusable: true, children };
  }
}

export const createClassic2048: AppFactory = (host) => new Classic2048(host);
