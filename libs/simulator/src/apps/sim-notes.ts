/**
 * Sim Notes (`com.farm.simapps.notes`), a multi-screen app the agent can leave.
 *
 * MainActivity: a list of 3 notes and an Exit button. NoteActivity: one open note and a Back button.
 * Tap regions, in proportion to the screen (W x H), half-open intervals:
 *   MainActivity  note i (i = 0, 1, 2): x in [0.05W, 0.95W), y in [0.15H + 0.2H·i, 0.30H + 0.2H·i)
 *                 Exit button:          x in [0.30W, 0.70W), y in [0.80H, 0.90H)
 *   NoteActivity  Back button:          x in [0.05W, 0.35W), y in [0.85H, 0.95H)
 * Opening note i logs `json_extra: {"opened": i}`; the target note (RL_TASK_GAME_CONFIG
 * `{"target": i}`, default 2, 0-based) then logs `reward: 1` and `episode end` (once per app run),
 * any other note `reward: -0.1`. BACK on NoteActivity returns to MainActivity; BACK, HOME or Exit on
 * MainActivity leave the app for the launcher unless the task is screen-pinned.
 */
import type { Canvas } from "../graphics/canvas.ts";
import { KEYCODE_BACK, type AppFactory, type AppHost, type SimApp, type ViewNode } from "../android/app-contract.ts";
import { configNumber } from "./game-config.ts";

export const NOTE_COUNT = 3;
const NOTE_TITLES = ["SHOPPING LIST", "MEETING AT 10", "SECRET RECIPE"];

type Box = [number, number, number, number]; // left, top, right, bottom

export function noteRowBox(i: number, w: number, h: number): Box {
  return [Math.round(0.05 * w), Math.round((0.15 + 0.2 * i) * h), Math.round(0.95 * w), Math.round((0.3 + 0.2 * i) * h)];
}
export function exitButtonBox(w: number, h: number): Box {
  return [Math.round(0.3 * w), Math.round(0.8 * h), Math.round(0.7 * w), Math.round(0.9 * h)];
}
export function backButtonBox(w: number, h: number): Box {
  return [Math.round(0.05 * w), Math.round(0.85 * h), Math.round(0.35 * w), Math.round(0.95 * h)];
}

function inside(b: Box, x: number, y: number): boolean {
  return x >= b[0] && x < b[2] && y >= b[1] && y < b[3];
}

class SimNotes implements SimApp {
  private openNote: number | undefined;
  private readonly target: number;
  private solved = false;

  constructor(
    private readonly host: AppHost,
    startActivity: string,
  ) {
    this.target = configNumber(host.config, "target", 2, { min: 0, max: NOTE_COUNT - 1, integer: true });
    if (startActivity === "NoteActivity") this.openNote = 0;
  }

  get activity(): string {
    return this.openNote === undefined ? "MainActivity" : "NoteActivity";
  }

  onNewIntent(activityClass: string): void {
    if (activityClass === "NoteActivity" && this.openNote === undefined) this.openNote = 0;
  }

  onTap(x: number, y: number): void {
    const { width: w, height: h } = this.host.screen;
    if (this.openNote !== undefined) {
      if (inside(backButtonBox(w, h), x, y)) this.openNote = undefined;
      return;
    }
    for (let i = 0; i < NOTE_COUNT; i++) {
      if (inside(noteRowBox(i, w, h), x, y)) return this.open(i);
    }
    if (inside(exitButtonBox(w, h), x, y)) this.host.finishTask();
  }

  private open(i: number): void {
    this.openNote = i;
    this.host.rl(`json_extra: {"opened": ${i}}`);
    if (this.solved) return;
    if (i === this.target) {
      this.solved = true;
      this.host.rl("reward: 1");
      this.host.rl("episode end");
    } else {
      this.host.rl("reward: -0.1");
    }
  }

  state(): { activity: string; openNote: number | undefined; target: number; solved: boolean } {
    return { activity: this.activity, openNote: this.openNote, target: this.target, solved: this.solved };
  }

  onKey(keycode: number): boolean {
    if (keycode === KEYCODE_BACK && this.openNote !== undefined) {
      this.openNote = undefined;
      return true;
    }
    return false;
  }

  render(c: Canvas): void {
    const { width: w, height: h } = this.host.screen;
    const scale = Math.max(1, Math.floor(w / 180));
    c.fill(0xffffff);
    c.rect(0, 0, w, 0.1 * h, 0x3949ab);
    const fill = (b: Box, color: number): void => c.rect(b[0], b[1], b[2] - b[0], b[3] - b[1], color);
    const button = (b: Box, color: number, label: string): void => {
      fill(b, color);
      c.textCentered(b[0], b[1], b[2] - b[0], b[3] - b[1], label, scale * 2, 0xffffff);
    };
    if (this.openNote === undefined) {
      c.textCentered(0, 0, w, 0.1 * h, "SIM NOTES", scale * 2, 0xffffff);
      for (let i = 0; i < NOTE_COUNT; i++) {
        const b = noteRowBox(i, w, h);
        fill(b, 0xe8eaf6);
        c.text(b[0] + 0.04 * w, (b[1] + b[3]) / 2 - 3.5 * scale, `${i}  ${NOTE_TITLES[i]}`, scale, 0x1a237e);
      }
      button(exitButtonBox(w, h), 0xe53935, "EXIT");
    } else {
      c.textCentered(0, 0, w, 0.1 * h, `NOTE ${this.openNote}`, scale * 2, 0xffffff);
      c.text(0.06 * w, 0.2 * h, NOTE_TITLES[this.openNote]!, scale * 2, 0x212121);
      for (let line = 0; line < 4; line++) c.rect(0.06 * w, (0.32 + 0.06 * line) * h, (0.88 - 0.12 * line) * w, 0.02 * h, 0xbdbdbd);
      button(backButtonBox(w, h), 0x757575, "BACK");
    }
  }

  /** The same views the screen draws, each with the text it shows; the notes, Exit and Back are clickable (a tap runs them). */
  viewHierarchy(): ViewNode {
    const { width: w, height: h } = this.host.screen;
    const title: ViewNode = { cls: "android.widget.TextView", id: "app:id/title", bounds: [0, 0, w, Math.round(0.1 * h)], text: this.openNote === undefined ? "SIM NOTES" : `NOTE ${this.openNote}` };
    const root = (id: string, content: ViewNode[]): ViewNode => ({ cls: "android.widget.LinearLayout", id, bounds: [0, 0, w, h], children: [title, ...content] });
    const button = (id: string, bounds: Box, text: string): ViewNode => ({ cls: "android.widget.Button", id, bounds, text, clickable: true, focusable: true });
    if (this.openNote === undefined) {
      return root("app:id/notes_root", [
        {
          cls: "android.widget.ListView",
          id: "app:id/notes_list",
          bounds: [0, Math.round(0.15 * h), w, Math.round(0.7 * h)],
          children: Array.from({ length: NOTE_COUNT }, (_, i) => ({ cls: "android.widget.TextView", id: `app:id/note_${i}`, bounds: noteRowBox(i, w, h), text: `${i}  ${NOTE_TITLES[i]}`, clickable: true, focusable: true })),
        },
        button("app:id/exit", exitButtonBox(w, h), "EXIT"),
      ]);
    }
    return root("app:id/note_root", [
      { cls: "android.widget.TextView", id: "app:id/note_body", bounds: [Math.round(0.06 * w), Math.round(0.2 * h), Math.round(0.94 * w), Math.round(0.6 * h)], text: NOTE_TITLES[this.openNote]! },
      button("app:id/back", backButtonBox(w, h), "BACK"),
    ]);
  }
}

export const createSimNotes: AppFactory = (host, launch) => new SimNotes(host, launch.activity);
