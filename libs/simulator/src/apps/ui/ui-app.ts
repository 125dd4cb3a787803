/**
 * The base of apps built with the toolkit: the app describes its page (and an open dialog) as one
 * widget tree from its plain state; this class draws it, routes taps, swipes, keys, typed text and
 * accessibility actions through it, and reports it. Focus on a text field brings up the on-screen
 * keyboard at the bottom; the page is laid out above it (adjustResize).
 */
import type { Canvas } from "../../graphics/canvas.ts";
import { KEYCODE_BACK, KEYCODE_ENTER, type AppHost, type SimApp, type ViewAction, type ViewNode } from "../../android/app-contract.ts";
import { keyboard, KEYBOARD_ROWS, type KeyPress } from "./keyboard.ts";
import { paintTree } from "./paint.ts";
import { findKey, inside, performAction, toViewNode, widgetAt, type Box, type Widget } from "./widget.ts";
import { panel } from "./widgets.ts";
import { KEYCODE } from "@farm/key-codes";

export const KEYCODE_DEL = KEYCODE.DEL;
/** Longest text a field holds (typing beyond it is ignored, as with android:maxLength). */
export const FIELD_MAX_CHARS = 200;
const KEY_ROW_DP = 44;

export abstract class UiApp implements SimApp {
  /** Key of the focused text field (the keyboard shows while it is on the page). */
  protected focused: string | undefined = undefined;

  constructor(protected readonly host: AppHost) {}

  abstract readonly activity: string;
  /** The page in `box` (the screen, or the part above the keyboard). */
  protected abstract page(box: Box): Widget;
  /** The open dialog, if any (a window of its own). */
  protected dialog(): Widget | undefined {
    return undefined;
  }
  /** BACK or Cancel-by-touching-outside while the dialog is open. */
  protected cancelDialog(): void {}
  /** BACK inside the app (no dialog, no keyboard); false at the app's first screen (the system then leaves it). */
  protected abstract back(): boolean;

  /** Density: 1 on the default 360-wide screen. */
  protected get dp(): number {
    return this.host.screen.width / 360;
  }

  protected focus(key: string | undefined): void {
    this.focused = key;
  }

  /** The current tree: the window's root (page, keyboard) and the dialog's. */
  protected tree(): { root: Widget; dialog: Widget | undefined } {
    const { width: w, height: h } = this.host.screen;
    const dialog = this.dialog();
    const wrap = (children: Widget[]): Widget => panel("content", [0, 0, w, h], children, { id: "android:id/content", cls: "android.widget.FrameLayout", paint: { bg: 0xffffff } });
    if (this.focused !== undefined && !dialog) {
      const kbTop = h - Math.round(KEYBOARD_ROWS * KEY_ROW_DP * this.dp);
      const page = this.page([0, 0, w, kbTop]);
      if (findKey(page, this.focused)) return { root: wrap([page, keyboard([0, kbTop, w, h], (k) => this.press(k))]), dialog };
    }
    return { root: wrap([this.page([0, 0, w, h])]), dialog };
  }

  private focusedField(): Widget | undefined {
    if (this.focused === undefined) return undefined;
    const f = findKey(this.tree().root, this.focused);
    return f?.editable ? f : undefined;
  }

  private press(k: KeyPress): void {
    if (k.type === "char") this.onText(k.ch);
    else this.onKey(k.type === "del" ? KEYCODE_DEL : KEYCODE_ENTER);
  }

  onTap(x: number, y: number): void {
    const { root, dialog } = this.tree();
    if (dialog && !inside(dialog.bounds, x, y)) return this.cancelDialog();
    const w = widgetAt(dialog ?? root, x, y, (v) => v.clickable === true);
    if (w?.on?.slideTo) w.on.slideTo(x);
    else w?.on?.click?.();
  }

  /** The topmost touchable widget's long click when it has one; else what a tap does (Android clicks on UP then). */
  onLongPress(x: number, y: number): void {
    const { root, dialog } = this.tree();
    const w = dialog ? undefined : widgetAt(root, x, y, (v) => v.clickable === true || v.longClickable === true);
    if (w?.longClickable && w.on?.longClick) return w.on.longClick();
    this.onTap(x, y);
  }

  onSwipe(x1: number, y1: number, x2: number, y2: number): void {
    const { root, dialog } = this.tree();
    if (dialog) return;
    const w = widgetAt(root, x1, y1, (v) => v.scrollable === true);
    // A swipe that starts on a slider drags its thumb to where the finger left the screen.
    if (w?.on?.slideTo) w.on.slideTo(x2);
    else w?.on?.drag?.(y1 - y2);
  }

  onKey(keycode: number): boolean {
    if (keycode === KEYCODE_BACK) return this.onBack();
    const field = this.focusedField();
    if (!field) return false;
    if (keycode === KEYCODE_DEL) {
      field.on?.setText?.([...(field.text ?? "")].slice(0, -1).join(""));
      return true;
    }
    if (keycode === KEYCODE_ENTER) {
      if (field.on?.submit) field.on.submit();
      else this.focus(undefined);
      return true;
    }
    return false;
  }

  private onBack(): boolean {
    if (this.dialog()) {
      this.cancelDialog();
      return true;
    }
    if (this.focusedField()) {
      this.focus(undefined); // BACK first hides the keyboard, as on Android
      return true;
    }
    return this.back();
  }

  onText(text: string): void {
    const field = this.focusedField();
    if (!field) return;
    const next = [...((field.text ?? "") + text)];
    field.on?.setText?.(next.slice(0, FIELD_MAX_CHARS).join(""));
  }

  onViewAction(key: string, action: ViewAction, text?: string): boolean {
    const { root, dialog } = this.tree();
    const target = dialog ?? root;
    if (action === "set_text" && text !== undefined) text = [...text].slice(0, FIELD_MAX_CHARS).join("");
    return performAction(target, key, action, text);
  }

  render(c: Canvas): void {
    const { root, dialog } = this.tree();
    paintTree(c, root, this.dp);
    if (dialog) {
      const b = dialog.bounds;
      c.rect(b[0] - 2, b[1] - 2, b[2] - b[0] + 4, b[3] - b[1] + 4, 0x424242);
      paintTree(c, dialog, this.dp);
    }
  }

  viewHierarchy(): ViewNode {
    return toViewNode(this.tree().root);
  }

  dialogHierarchy(): ViewNode | undefined {
    const d = this.tree().dialog;
    return d ? toViewNode(d) : undefined;
  }
}
