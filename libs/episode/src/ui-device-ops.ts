/**
 * The device operations UI actions are made of, each a StepResult (never thrown): taps, keys, text and gestures on
 * the session's action channel (gRPC KeyboardEvents, or `input` lines on the shell stream).
 */
import type { ActionChannel, Device, StepResult } from "@farm/adb";
import { coerceError } from "@farm/errors";

/** What the actuator reaches on the session's device. */
export interface UiActuatorDevice {
  device: Device;
  /** The session's action channel (touches, swipes, keys, text), when open. */
  channel: ActionChannel | undefined;
  /** The screen's natural size (`wm size`). */
  screen(): { width: number; height: number };
  /** 0..3 as last read; element bounds and x,y are in the frame shown (width and height swap in landscape). @default 0 */
  orientation?(): 0 | 1 | 2 | 3;
  /** Deadline for one adb call (a tree read for open_app). */
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

/** Types `text` into the focused field on the session's channel (the same text on every transport: ActionChannel.text). */
export function typeText(dev: UiActuatorDevice, text: string): Promise<StepResult> {
  return onChannel(dev, "input_text", (c) => c.text(text));
}
