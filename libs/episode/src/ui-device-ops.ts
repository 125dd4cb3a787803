/**
 * The device operations UI actions are made of, each a StepResult (never thrown): taps, keys and gestures on the
 * session's action channel, text through the channel's `text` (one gRPC KeyboardEvent, or one `input text` on the
 * shell stream) or, for a channel without it, `input text` over adb.
 */
import type { ActionChannel, Device, StepResult } from "@farm/adb";
import { coerceError } from "@farm/errors";
import { shQuote } from "@farm/shell-words";

/** What the actuator reaches on the session's device. */
export interface UiActuatorDevice {
  device: Device;
  /** The session's action channel (touches, swipes, keys, text), when open. */
  channel: ActionChannel | undefined;
  /** The screen's natural size (`wm size`). */
  screen(): { width: number; height: number };
  /** 0..3 as last read; element bounds and x,y are in the frame shown (width and height swap in landscape). @default 0 */
  orientation?(): 0 | 1 | 2 | 3;
  /** Deadline for one adb call (text input, a tree read for open_app). */
  adbCallTimeoutMs: number;
}

export const OK: StepResult = { status: "ok", message: "", output: "", durationMs: 0 };

function failed(status: StepResult["status"], message: string): StepResult {
  return { status, message, output: "", durationMs: 0 };
}

/** Runs one channel operation; no channel (closed after device trouble) or a throw becomes a failed result. */
export async function onChannel(dev: UiActuatorDevice, what: string, op: (ch: ActionChannel) => Promise<StepResult>): Promise<StepResult> {
  const ch = dev.channel;
  if (!ch) return failed("adb_error", `${what}: the device has no open action channel`);
  try {
    return await op(ch);
  } catch (e) {
    return failed("adb_error", `${what}: ${coerceError(e).message}`);
  }
}

/** Types `text` into the focused field by the quickest path the device has. */
export async function typeText(dev: UiActuatorDevice, text: string): Promise<StepResult> {
  const ch = dev.channel;
  if (ch?.text) return onChannel(dev, "input_text", (c) => c.text!(text));
  try {
    const r = await dev.device.shell(`input text ${shQuote(text)}`, { timeoutMs: dev.adbCallTimeoutMs });
    if (r.status !== "ok") return { status: r.status, message: `input_text: ${r.message}`, output: r.stdout, durationMs: r.durationMs };
    if (/(^|\n)\s*(Error|Exception)/.test(r.stdout)) return { status: "internal_error", message: `input_text: ${r.stdout.trim().slice(0, 200)}`, output: r.stdout, durationMs: r.durationMs };
    return { ...OK, durationMs: r.durationMs };
  } catch (e) {
    return failed("adb_error", `input_text: ${coerceError(e).message}`);
  }
}

/** Presses one key `times` times (DEL to clear a field), stopping at the first failure or an abort. */
export async function pressKeys(dev: UiActuatorDevice, keycode: string, times: number, signal: AbortSignal): Promise<StepResult> {
  for (let i = 0; i < times && !signal.aborted; i++) {
    const r = await onChannel(dev, `key ${keycode}`, (c) => c.keyEvent(keycode));
    if (r.status !== "ok") return r;
  }
  return OK;
}
