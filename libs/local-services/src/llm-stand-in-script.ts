/**
 * What the LLM stand-in answers: script entries (one per request, in order) and solver rules (answered by the
 * prompt's element list, the same for every conversation). The element list is read from the prompt's lines
 * `<index>: {json}` (the farm's default prompt writes them so).
 */

/** A JSON action as the stand-in writes it into the answer's text. */
export type StandInAction = Record<string, unknown>;

export type StandInReply =
  /** The action alone, as JSON text. */
  | { json: StandInAction }
  /** The action in a fenced ```json block with a line of prose before it. */
  | { fenced: StandInAction }
  /** AndroidWorld's style: "Reason: … Action: {…}" and a trailing remark. */
  | { prose: StandInAction }
  /** Any text, verbatim (nonsense, an empty answer). */
  | { text: string }
  /** An HTTP error: 429 with Retry-After seconds, 500, 503 … */
  | { status: number; retryAfterS?: number; body?: string }
  /** Waits, then answers `then` (default: a wait action). */
  | { slowMs: number; then?: StandInReply }
  /** Clicks the element whose text, content description, hint or resource id name is this (spaces aside). */
  | { click_text: string }
  /** Types `text` into the element found by `type_into` as click_text finds one (unless it holds the text already). */
  | { type_into: string; text: string };

/** Every entry may also set the usage it reports (default: estimated from the characters). */
export type StandInEntry = StandInReply & { usage?: { prompt_tokens: number; completion_tokens: number } };

export interface PromptElement {
  index: number;
  text?: string;
  content_description?: string;
  hint_text?: string;
  resource_id?: string;
}

/** The `<index>: {json}` lines of the prompt text. */
export function promptElements(prompt: string): PromptElement[] {
  const out: PromptElement[] = [];
  for (const m of prompt.matchAll(/^(\d{1,5}): (\{.*\})$/gm)) {
    try {
      const o = JSON.parse(m[2]!) as Record<string, unknown>;
      const str = (k: string) => (typeof o[k] === "string" ? (o[k] as string) : undefined);
      const e: PromptElement = { index: Number(m[1]) };
      for (const k of ["text", "content_description", "hint_text", "resource_id"] as const) {
        const v = str(k);
        if (v !== undefined) e[k] = v;
      }
      out.push(e);
    } catch {
      /* not an element line */
    }
  }
  return out;
}

const norm = (s: string | undefined) => (s ?? "").replace(/\s+/g, " ").trim();

/** By text first, then content description or hint (case counts: "NEW NOTE" is not the "New note" title), then resource id name (`…:id/<label>`). */
export function findElement(elements: readonly PromptElement[], label: string): PromptElement | undefined {
  const want = norm(label);
  return (
    elements.find((e) => norm(e.text) === want) ??
    elements.find((e) => norm(e.content_description) === want || norm(e.hint_text) === want) ??
    elements.find((e) => norm(e.resource_id?.split("id/").at(-1)) === want)
  );
}

/** A solver rule applies when its element is on the screen (and, for typing, does not hold the text yet). */
export function solverAction(rules: readonly StandInReply[], elements: readonly PromptElement[]): StandInAction {
  for (const r of rules) {
    if ("click_text" in r) {
      const e = findElement(elements, r.click_text);
      if (e) return { action_type: "click", index: e.index };
    } else if ("type_into" in r) {
      const e = findElement(elements, r.type_into);
      if (e && norm(e.text) !== norm(r.text)) return { action_type: "input_text", text: r.text, index: e.index };
    }
  }
  return { action_type: "wait" };
}

/** The answer text of a content entry (not status / slow ones); element-bound entries resolve against the prompt. */
export function replyText(r: StandInReply, elements: readonly PromptElement[]): string {
  if ("json" in r) return JSON.stringify(r.json);
  if ("fenced" in r) return `Here is the next action.\n\`\`\`json\n${JSON.stringify(r.fenced, null, 2)}\n\`\`\``;
  if ("prose" in r) return `Reason: this gets closer to the goal.\nAction: ${JSON.stringify(r.prose)}\nI hope this helps.`;
  if ("text" in r) return r.text;
  if ("click_text" in r || "type_into" in r) {
    const a = solverAction([r], elements);
    return `Reason: the element is on the screen.\nAction: ${JSON.stringify(a)}`;
  }
  return JSON.stringify({ action_type: "wait" });
}
