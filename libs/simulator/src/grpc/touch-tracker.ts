/**
 * Turns the emulator's TouchEvent stream into the input dispatcher's gestures, as the emulator's
 * multi-touch device does: a touch with pressure > 0 puts its finger (identifier) down or moves it,
 * pressure 0 lifts it. The first finger down drives taps and swipes (the same path `input tap` /
 * `input swipe` take); further fingers reach the app's raw touch stream. A lift of a finger that is
 * not down (e.g. AndroidEnv's all-zero "no touch" action) does nothing.
 */
import type { AndroidSystem } from "../android/system/android-system.ts";
import type { TouchMsg } from "@farm/emulator-grpc";

export class TouchTracker {
  /** identifier → last position, for fingers currently down. */
  private readonly down = new Map<number, { x: number; y: number }>();
  private primary: number | undefined;
  private restoresSeen: number;

  constructor(private readonly sys: AndroidSystem) {
    this.restoresSeen = sys.restoreCount;
  }

  apply(touches: readonly TouchMsg[]): void {
    // After a snapshot load (from gRPC, the console or the API) the device has no finger down.
    if (this.sys.restoreCount !== this.restoresSeen) {
      this.restoresSeen = this.sys.restoreCount;
      this.down.clear();
      this.primary = undefined;
    }
    for (let i = 0; i < touches.length; i++) this.one(touches[i]!);
  }

  private one(t: TouchMsg): void {
    const id = t.identifier;
    const wasDown = this.down.has(id);
    const input = this.sys.input;
    if (t.pressure > 0) {
      this.down.set(id, { x: t.x, y: t.y });
      if (this.primary === undefined && !wasDown) {
        this.primary = id;
        input.motion("down", t.x, t.y);
      } else if (id === this.primary) input.motion("move", t.x, t.y);
      else input.extraPointer(wasDown ? "move" : "down", t.x, t.y);
      return;
    }
    if (!wasDown) return;
    this.down.delete(id);
    if (id === this.primary) {
      this.primary = undefined;
      input.motion("up", t.x, t.y);
    } else input.extraPointer("up", t.x, t.y);
  }
}
