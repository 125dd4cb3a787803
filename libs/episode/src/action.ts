/**
 * Actions to touch events (task-format.md §9): pixel = (min(int(x·W), W−1), min(int(y·H), H−1));
 * TOUCH → finger down (or move while it is down), LIFT → finger up where it is (its position is ignored), REPEAT → nothing.
 */
import type { ActionChannel, StepResult } from "@farm/adb";
import type { Action } from "@farm/policy";

export function toPixel(pos: readonly [number, number], screen: { width: number; height: number }): [number, number] {
  return [Math.min(Math.trunc(clampUnit(pos[0]) * screen.width), screen.width - 1), Math.min(Math.trunc(clampUnit(pos[1]) * screen.height), screen.height - 1)];
}

// A module function, not a closure in toPixel: tsx's esbuild keepNames wraps each named closure in a property
// definition every time it is made (measured: ~3 µs per step).
function clampUnit(v: number): number {
  return Number.isFinite(v) ? Math.min(Math.max(v, 0), 1) : 0;
}

const OK: StepResult = { status: "ok", message: "", output: "", durationMs: 0 };

/** One finger's state on one device. */
export class Finger {
  private down: [number, number] | undefined;

  async apply(channel: ActionChannel, action: Action, screen: { width: number; height: number }): Promise<StepResult> {
    if (action.actionType === "REPEAT") return OK;
    if (action.actionType === "TOUCH") {
      const [x, y] = toPixel(action.touchPosition, screen);
      const r = this.down ? await channel.touchMove(x, y) : await channel.touchDown(x, y);
      if (r.status === "ok") this.down = [x, y];
      return r;
    }
    // LIFT: the farm's Action contract says its position is ignored, so the finger comes up where it is.
    // Upstream sends an "up" event even when no finger is down; the farm only lifts a finger that is down.
    if (!this.down) return OK;
    const [x, y] = this.down;
    const r = await channel.touchUp(x, y);
    this.down = undefined; // whatever the answer, treat the finger as lifted (the device resets input on recovery)
    return r;
  }

  /** Lift the finger where it is (before every reset). */
  async lift(channel: ActionChannel): Promise<StepResult> {
    if (!this.down) return OK;
    const [x, y] = this.down;
    this.down = undefined;
    return channel.touchUp(x, y);
  }

  forget(): void {
    this.down = undefined;
  }
}
