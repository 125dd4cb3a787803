/**
 * Carries out a UI action (AndroidWorld's JSON action) on the device through its fast paths, against the element
 * list the action was chosen on, and says what it came to (`resolved`) or why it could not be done (`invalid`: an
 * index out of range, an unknown app — the agent's mistake, never the device's). Device trouble comes back as the
 * failed StepResult. Never throws. An abort stops the action between its device operations: what was done is
 * resolved with an ok result (nothing failed on the device) and the run ends the episode at the step boundary.
 * What each type does: libs/episode/README.md, "UI actions".
 */
import { checkInputText, type StepResult } from "@farm/adb";
import type { ResolvedUiAction, UiAction, UiElement } from "@farm/policy";
import { sleep } from "@farm/time";
import { OK, onChannel, typeText, type UiActuatorDevice } from "./ui-device-ops.ts";
import { pointOf, scrollPath, shownSize, swipePath, type Path, type Size } from "./ui-geometry.ts";
import { openApp } from "./ui-open-app.ts";

export type { UiActuatorDevice };
export type UiActuation = { resolved: ResolvedUiAction; result: StepResult } | { invalid: string };

/** How long a long press holds the finger down (Android takes 400–500 ms as long; AndroidWorld holds about a second). */
export const LONG_PRESS_MS = 1000;
/** Between the taps of a double tap (Android's GestureDetector ignores a second tap under 40 ms, and waits 300 ms). */
export const DOUBLE_TAP_GAP_MS = 100;
/** A scroll's duration (`input swipe`'s default) and a swipe's (AndroidWorld's). */
export const SCROLL_MS = 300;
export const SWIPE_MS = 500;
/** `wait`: a fixed pause, as AndroidWorld's. */
export const WAIT_MS = 1000;
/** DELs sent by clear_text when the field's text is not known from the element list (a bound, not a guess). */
export const CLEAR_UNKNOWN_DELS = 64;
/** At most this many DELs, whatever the element says (END and the DELs go as one command: MAX_KEYS_PER_COMMAND). */
const CLEAR_MAX_DELS = 500;

type Ctx = { ui: UiAction; elements: readonly UiElement[] | undefined; dev: UiActuatorDevice; signal: AbortSignal; size: Size; t0: number };

export async function actuateUi(ui: UiAction, elements: readonly UiElement[] | undefined, dev: UiActuatorDevice, signal: AbortSignal): Promise<UiActuation> {
  const ctx: Ctx = { ui, elements, dev, signal, size: shownSize(dev.screen(), dev.orientation?.() ?? 0), t0: performance.now() };
  try {
    return await dispatch(ctx);
  } catch (e) {
    // Unreachable by design (every operation returns its trouble); kept so the contract "never throws" holds.
    return { resolved: done(ctx, { op: opOf(ui) }), result: { status: "internal_error", message: `${ui.action_type}: ${String(e)}`, output: "", durationMs: 0 } };
  }
}

function opOf(ui: UiAction): ResolvedUiAction["op"] {
  const t = ui.action_type;
  if (t === "click") return "tap";
  if (t === "double_tap" || t === "long_press" || t === "open_app" || t === "wait" || t === "status" || t === "answer") return t;
  if (t === "input_text") return "type";
  return t === "scroll" || t === "swipe" ? "swipe" : "key";
}

function done(ctx: Ctx, r: ResolvedUiAction): ResolvedUiAction {
  return { ...r, durationMs: Math.round(performance.now() - ctx.t0) };
}

function dispatch(ctx: Ctx): Promise<UiActuation> {
  const { ui } = ctx;
  switch (ui.action_type) {
    case "click":
    case "double_tap":
    case "long_press":
      return pointed(ctx);
    case "input_text":
      return inputText(ctx);
    case "keyboard_enter":
      return key(ctx, "KEYCODE_ENTER");
    case "navigate_home":
      return key(ctx, "KEYCODE_HOME");
    case "navigate_back":
      return key(ctx, "KEYCODE_BACK");
    case "scroll": {
      const p = scrollPath(ui, ctx.elements, ctx.size);
      return "invalid" in p ? Promise.resolve(p) : gesture(ctx, p, SCROLL_MS);
    }
    case "swipe":
      return gesture(ctx, swipePath(ui.direction ?? "up", ctx.size), SWIPE_MS);
    case "open_app":
      return openApp(ui.app_name ?? "", ctx.dev, ctx.signal);
    case "wait":
      return sleep(WAIT_MS, ctx.signal).then(() => ({ resolved: done(ctx, { op: "wait" }), result: OK }));
    default:
      // status and answer touch nothing (the run records them itself); unknown never parses.
      return Promise.resolve({ invalid: `${ui.action_type} is not carried out on the device` });
  }
}

async function pointed(ctx: Ctx): Promise<UiActuation> {
  const p = pointOf(ctx.ui, ctx.elements, ctx.size);
  if ("invalid" in p) return p;
  const at = { x: p.x, y: p.y, ...(p.element !== undefined ? { element: p.element } : {}) };
  const t = ctx.ui.action_type;
  if (t === "long_press") {
    const r = await onChannel(ctx.dev, "long_press", (c) => c.swipe(p.x, p.y, p.x, p.y, LONG_PRESS_MS));
    return { resolved: done(ctx, { op: "long_press", ...at }), result: r };
  }
  let r = await onChannel(ctx.dev, t, (c) => c.tap(p.x, p.y));
  if (t === "double_tap" && r.status === "ok" && !ctx.signal.aborted) {
    await sleep(DOUBLE_TAP_GAP_MS, ctx.signal);
    if (!ctx.signal.aborted) r = await onChannel(ctx.dev, t, (c) => c.tap(p.x, p.y));
  }
  return { resolved: done(ctx, { op: t === "double_tap" ? "double_tap" : "tap", ...at }), result: r };
}

async function key(ctx: Ctx, keycode: string): Promise<UiActuation> {
  const r = await onChannel(ctx.dev, ctx.ui.action_type, (c) => c.keyEvent(keycode));
  return { resolved: done(ctx, { op: "key", key: keycode }), result: r };
}

async function gesture(ctx: Ctx, p: Path, ms: number): Promise<UiActuation> {
  const r = await onChannel(ctx.dev, ctx.ui.action_type, (c) => c.swipe(p.x1, p.y1, p.x2, p.y2, ms));
  return { resolved: done(ctx, { op: "swipe", x: p.x1, y: p.y1, toX: p.x2, toY: p.y2, ...(p.element !== undefined ? { element: p.element } : {}) }), result: r };
}

/** input_text: focus the target (index or x,y) with a tap, clear it when asked (END and the DELs, one command), type the text. */
async function inputText(ctx: Ctx): Promise<UiActuation> {
  const { ui, dev, signal } = ctx;
  const text = ui.text ?? "";
  if (text !== "") {
    const bad = checkInputText(text);
    if (bad) return { invalid: bad.replace(/send ENTER or BACK with press_button/, "send keyboard_enter for a new line") };
  }
  const targeted = ui.index !== undefined || ui.x !== undefined;
  const p = targeted ? pointOf(ui, ctx.elements, ctx.size) : undefined;
  if (p && "invalid" in p) return p;
  const resolved = () => done(ctx, { op: "type", text, ...(p ? { x: p.x, y: p.y } : {}), ...(p?.element !== undefined ? { element: p.element } : {}) });
  const steps: (() => Promise<StepResult>)[] = [];
  if (p) steps.push(() => onChannel(dev, "input_text: focus", (c) => c.tap(p.x, p.y)));
  if (ui.clear_text) {
    const dels = clearCount(ctx, p?.element);
    steps.push(() => onChannel(dev, "input_text: clear", (c) => c.keyEvents(["KEYCODE_MOVE_END", ...Array<string>(dels).fill("KEYCODE_DEL")])));
  }
  if (text !== "") steps.push(() => typeText(dev, text));
  for (const step of steps) {
    if (signal.aborted) return { resolved: resolved(), result: { ...OK, message: "aborted before the text was typed" } };
    const r = await step();
    if (r.status !== "ok") return { resolved: resolved(), result: r };
  }
  return { resolved: resolved(), result: OK };
}

/** DELs that empty the field: its text's length when the element list shows it (the target, else the focused editable). */
function clearCount(ctx: Ctx, element: number | undefined): number {
  const els = ctx.elements;
  const e = element !== undefined ? els?.[element] : els?.find((x) => x.is_editable && x.is_focused);
  if (!e) return CLEAR_UNKNOWN_DELS;
  return Math.min([...e.text].length, CLEAR_MAX_DELS);
}
