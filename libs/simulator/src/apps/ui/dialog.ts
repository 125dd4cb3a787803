/** An alert dialog: a window of its own over the activity (SimApp.dialogHierarchy), with AlertDialog's ids. */
import type { Box, Widget } from "./widget.ts";
import { button, COLORS, label, panel } from "./widgets.ts";

export interface DialogButton {
  text: string;
  press: () => void;
}

/** `positive` is android:id/button1, `negative` android:id/button2, as AlertDialog names them. */
export function alertDialog(screen: { width: number; height: number }, dp: number, title: string, message: string, negative: DialogButton, positive: DialogButton): Widget {
  const { width: w, height: h } = screen;
  const d = (v: number): number => Math.round(v * dp);
  const box: Box = [d(24), Math.round(h / 2) - d(80), w - d(24), Math.round(h / 2) + d(80)];
  const [l, t, r, b] = box;
  const btnW = d(96);
  const btnTop = b - d(52);
  return panel(
    "dialog",
    box,
    [
      label("alertTitle", [l + d(8), t + d(8), r - d(8), t + d(48)], title, { id: "android:id/alertTitle", paint: { scale: 2, fg: COLORS.text } }),
      label("message", [l + d(8), t + d(52), r - d(8), t + d(92)], message, { id: "android:id/message", paint: { scale: 1, fg: 0x616161 } }),
      button("button2", [r - 2 * btnW - d(16), btnTop, r - btnW - d(16), b - d(8)], negative.text, negative.press, { id: "android:id/button2", paint: { bg: 0xffffff, fg: COLORS.accent } }),
      button("button1", [r - btnW - d(8), btnTop, r - d(8), b - d(8)], positive.text, positive.press, { id: "android:id/button1" }),
    ],
    { id: "android:id/content", cls: "android.widget.FrameLayout", paint: { bg: 0xfafafa } },
  );
}
