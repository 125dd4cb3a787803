/**
 * Carries out a UI action (AndroidWorld's JSON action) on the device through its fast paths, against the element
 * list the action was chosen on, and says what it came to (`resolved`) or why it could not be done (`invalid`: an
 * index out of range, an unknown app — the agent's mistake, never the device's). Device trouble comes back as the
 * failed StepResult. Never throws.
 */
import type { ActionChannel, Device, StepResult } from "@farm/adb";
import type { ResolvedUiAction, UiAction, UiElement } from "@farm/policy";

export type UiActuation = { resolved: ResolvedUiAction; result: StepResult } | { invalid: string };

/** What the actuator reaches on the session's device. */
export interface UiActuatorDevice {
  device: Device;
  /** The session's action channel (touches, swipes, keys), when open. */
  channel: ActionChannel | undefined;
  screen(): { width: number; height: number };
  /** Deadline for one adb call (text input, a tree read for open_app). */
  adbCallTimeoutMs: number;
}

export async function actuateUi(ui: UiAction, elements: readonly UiElement[] | undefined, dev: UiActuatorDevice, signal: AbortSignal): Promise<UiActuation> {
  void elements;
  void dev;
  void signal;
  return { invalid: `${ui.action_type}: UI actions are not carried out yet` };
}
