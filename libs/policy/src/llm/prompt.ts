/**
 * The prompt: a template with placeholders, filled each step. The default is in the style of AndroidWorld's
 * text and multimodal agents (the action set with its JSON keys, elements referred to by index, one JSON action
 * as the answer), in our own words. A replacement comes from a file (`--llm-prompt FILE`).
 *
 * Placeholders (each may appear any number of times; unknown ones are an error when the file is loaded):
 *   {{goal}}           the episode's goal
 *   {{history}}        the previous answers and what became of them, oldest first ("(none yet)" on the first step)
 *   {{elements}}       the screen's elements, one per line: `<index>: {json}` (ELEMENT_FIELDS)
 *   {{screen_width}}   {{screen_height}}   the screen in pixels as shown (swapped in landscape; x, y of actions are in these pixels)
 *   {{step}}           the step number, from 1
 */
import { readFileSync } from "node:fs";
import { PolicyError } from "../errors.ts";

export const PROMPT_PLACEHOLDERS = ["goal", "history", "elements", "screen_width", "screen_height", "step"] as const;
export type PromptPlaceholder = (typeof PROMPT_PLACEHOLDERS)[number];

/** Longest template accepted (characters): a prompt is text, not a data set. */
export const PROMPT_TEMPLATE_MAX_CHARS = 64_000;

export const DEFAULT_PROMPT_TEMPLATE = `You operate an Android phone for a user, one action at a time, until the user's goal is reached.

Goal: {{goal}}

Each turn you get the goal, what you did so far and how it went, the elements on the screen now (each with an index) and, when available, a screenshot. Choose the single next action and write it as one JSON object, using one of these forms:
- Tap an element: {"action_type": "click", "index": <element index>}
- Double tap or long press an element: {"action_type": "double_tap", "index": <i>} / {"action_type": "long_press", "index": <i>}
- Type text into an editable element (it is focused first, no click needed): {"action_type": "input_text", "text": "<text>", "index": <i>}
- Press the keyboard's enter key: {"action_type": "keyboard_enter"}
- Go to the home screen or back: {"action_type": "navigate_home"} / {"action_type": "navigate_back"}
- Scroll the screen or an element to see more (up, down, left or right): {"action_type": "scroll", "direction": "down"} or with "index": <i>
- Swipe across the screen: {"action_type": "swipe", "direction": "left"}
- Open an app by its name in the launcher: {"action_type": "open_app", "app_name": "<name>"}
- Wait for the screen to change: {"action_type": "wait"}
- Answer a question the goal asks: {"action_type": "answer", "text": "<answer>"}
- Finish: {"action_type": "status", "goal_status": "complete"} when the goal is reached, or "infeasible" when it cannot be.
Where no element fits, click, double_tap and long_press also take screen pixels instead of an index: "x": <0..{{screen_width}}>, "y": <0..{{screen_height}}>.

Refer to elements only by the indexes listed below; they change from screen to screen. If an action did nothing, try something else rather than repeating it.

What you did so far:
{{history}}

Elements on the screen (step {{step}}):
{{elements}}

Answer with a short reason, then the action, like this:
Reason: <one sentence>
Action: {"action_type": ...}`;

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** Checks a template's placeholders; `where` names its origin (file) for the message. */
export function checkTemplate(text: string, where: string): string {
  if (text.length > PROMPT_TEMPLATE_MAX_CHARS) throw new PolicyError("bad_spec", `${where}: the prompt template has ${text.length} characters, more than ${PROMPT_TEMPLATE_MAX_CHARS}`);
  if (text.trim() === "") throw new PolicyError("bad_spec", `${where}: the prompt template is empty`);
  for (const m of text.matchAll(PLACEHOLDER)) {
    if (!(PROMPT_PLACEHOLDERS as readonly string[]).includes(m[1]!)) {
      const line = text.slice(0, m.index).split("\n").length;
      throw new PolicyError("bad_spec", `${where}:${line}: unknown placeholder {{${m[1]!.slice(0, 40)}}}; known: ${PROMPT_PLACEHOLDERS.map((p) => `{{${p}}}`).join(", ")}`);
    }
  }
  return text;
}

/** A template file (`--llm-prompt FILE`), checked. */
export function loadPromptTemplate(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new PolicyError("bad_spec", `${file}: cannot read the prompt template (${(e as { code?: string }).code ?? "error"}); give a readable text file`);
  }
  return checkTemplate(text, file);
}

/** Fills every placeholder in one pass (a value's own `{{…}}` text is not expanded again). */
export function renderPrompt(template: string, values: Record<PromptPlaceholder, string>): string {
  return template.replace(PLACEHOLDER, (all, name: string) => (Object.hasOwn(values, name) ? values[name as PromptPlaceholder] : all));
}
