/** Whether a model's answer holds a usable UI action, and the correction the model is shown when it does not. */
import { parseUiAction, type UiAction } from "../ui-action.ts";
import { extractAction } from "./answer-text.ts";

/** The action, or why it cannot be used (our words, never the model's text: the reason is shown back to it). */
export function usableAction(answer: string, elementCount: number | undefined): { ui: UiAction } | { invalid: string } {
  const found = extractAction(answer);
  if ("invalid" in found) return found;
  const ui = parseUiAction(found.value);
  if ("invalid" in ui) return ui;
  if (ui.index !== undefined && elementCount !== undefined && ui.index >= elementCount) {
    return { invalid: `index ${ui.index} is not on the screen (elements 0 to ${elementCount - 1})` };
  }
  return { ui };
}

/** The user message asking again after an unusable answer. */
export function correction(reason: string): string {
  return `That answer could not be used: ${reason}. Answer again with exactly one JSON action from the list, for example:\nAction: {"action_type": "click", "index": 0}`;
}
