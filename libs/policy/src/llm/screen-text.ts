/**
 * The observation as prompt text: the element list (one line per element, `<index>: {json}`, so a reader, or our
 * stand-in server, finds them) and the history of previous answers and their outcomes. Both bounded.
 */
import type { StepOutcome, UiElement } from "../types.ts";

/** Elements shown at most (a screen with more is cut, and says so). */
export const PROMPT_MAX_ELEMENTS = 300;
/** Longest text of one element field. */
const FIELD_MAX = 200;
/** Longest answer or outcome quoted in the history. */
const HISTORY_ITEM_MAX = 300;

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** One element as a compact JSON object: only what it has (empty texts and false flags left out). */
function elementJson(e: UiElement): string {
  const o: Record<string, unknown> = { class: e.class_name.split(".").at(-1) ?? e.class_name };
  if (e.text) o.text = clip(e.text, FIELD_MAX);
  if (e.content_description) o.content_description = clip(e.content_description, FIELD_MAX);
  if (e.hint_text) o.hint_text = clip(e.hint_text, FIELD_MAX);
  if (e.resource_id) o.resource_id = clip(e.resource_id, FIELD_MAX);
  o.bounds = e.bounds;
  for (const [k, v] of [
    ["clickable", e.is_clickable],
    ["long_clickable", e.is_long_clickable],
    ["editable", e.is_editable],
    ["scrollable", e.is_scrollable],
    ["checkable", e.is_checkable],
    ["checked", e.is_checked],
    ["focused", e.is_focused],
    ["selected", e.is_selected],
  ] as const) if (v) o[k] = true;
  if (!e.is_enabled) o.enabled = false;
  return JSON.stringify(o);
}

export function elementLines(elements: readonly UiElement[] | undefined): string {
  if (!elements || elements.length === 0) return "(no elements: the screen could not be read, or it shows none)";
  const shown = elements.slice(0, PROMPT_MAX_ELEMENTS).map((e) => `${e.index}: ${elementJson(e)}`);
  if (elements.length > PROMPT_MAX_ELEMENTS) shown.push(`(${elements.length - PROMPT_MAX_ELEMENTS} more elements not shown)`);
  return shown.join("\n");
}

/** What a previous answer came to, in a few words. */
export function outcomeText(o: StepOutcome): string {
  if (o.invalid !== undefined) return `not carried out: ${clip(o.invalid, HISTORY_ITEM_MAX)}`;
  const r = o.resolved;
  if (!r) return "carried out";
  const parts: string[] = [r.op];
  if (r.element !== undefined) parts.push(`element ${r.element}`);
  if (r.x !== undefined && r.y !== undefined) parts.push(`at (${r.x}, ${r.y})`);
  if (r.toX !== undefined && r.toY !== undefined) parts.push(`to (${r.toX}, ${r.toY})`);
  if (r.text !== undefined) parts.push(`text ${JSON.stringify(clip(r.text, 100))}`);
  if (r.key !== undefined) parts.push(r.key);
  if (r.app !== undefined) parts.push(r.app);
  return `done: ${parts.join(" ")}`;
}

/** The history the prompt shows: the last `max` steps, oldest first. */
export class PromptHistory {
  private items: string[] = [];
  private count = 0;

  constructor(private readonly max: number) {}

  clear(): void {
    this.items = [];
    this.count = 0;
  }

  /** The action the model gave last step (the JSON text) and what the farm did with it. */
  add(outcome: StepOutcome): void {
    this.count++;
    this.items.push(`Step ${this.count}: ${clip(outcome.given, HISTORY_ITEM_MAX)} → ${outcomeText(outcome)}`);
    if (this.items.length > this.max) this.items.shift();
  }

  text(): string {
    if (this.items.length === 0) return "(none yet)";
    const skipped = this.count - this.items.length;
    return (skipped > 0 ? [`(${skipped} earlier steps not shown)`, ...this.items] : this.items).join("\n");
  }
}
