/**
 * A model's answer text → the JSON action in it, tolerantly: the action alone, in a fenced ```json block, after
 * AndroidWorld's "Action:" marker, or as the first balanced JSON object among prose (a Python dict literal in single
 * quotes is read too). Bounded: only the first ANSWER_SCAN_CHARS characters and ANSWER_MAX_CANDIDATES objects are
 * looked at.
 */
export const ANSWER_SCAN_CHARS = 20_000;
export const ANSWER_MAX_CANDIDATES = 50;

export type ExtractedAction = { value: Record<string, unknown> } | { invalid: string };

/** The first balanced {...} starting at or after `from` (braces in JSON strings ignored), or undefined. */
function balancedAt(text: string, start: number): string | undefined {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return text.slice(start, i + 1);
  }
  return undefined;
}

/** JSON, or a Python dict literal as some models write it ({'action_type': 'click', 'index': 3}, True/None). */
function parseLoose(candidate: string): unknown {
  try {
    return JSON.parse(candidate);
  } catch (e) {
    if (candidate.includes('"') || !candidate.includes("'")) throw e;
    return JSON.parse(candidate.replace(/'/g, '"').replace(/\bTrue\b/g, "true").replace(/\bFalse\b/g, "false").replace(/\bNone\b/g, "null"));
  }
}

function objects(text: string, budget: { left: number }): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  let i = text.indexOf("{");
  while (i >= 0 && budget.left-- > 0) {
    const candidate = balancedAt(text, i);
    if (candidate === undefined) break;
    try {
      const v: unknown = parseLoose(candidate);
      if (typeof v === "object" && v !== null && !Array.isArray(v)) {
        out.push(v as Record<string, unknown>);
        i = text.indexOf("{", i + candidate.length);
        continue;
      }
    } catch {
      /* not JSON from here: try the next brace */
    }
    i = text.indexOf("{", i + 1);
  }
  return out;
}

/** The places an action is most likely written, most specific first. */
function regions(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/```[a-zA-Z]*[ \t]*\n?([\s\S]*?)```/g)) out.push(m[1]!);
  // AndroidWorld's agents answer "Reason: … Action: {…}": the last marker's object is the action.
  let marker = -1;
  for (const m of text.matchAll(/Action\s*:/gi)) marker = m.index;
  if (marker >= 0) out.push(text.slice(marker));
  out.push(text);
  return out;
}

export function extractAction(answer: string): ExtractedAction {
  const text = answer.slice(0, ANSWER_SCAN_CHARS);
  if (text.trim() === "") return { invalid: "the answer was empty" };
  const budget = { left: ANSWER_MAX_CANDIDATES };
  let firstObject: Record<string, unknown> | undefined;
  for (const region of regions(text)) {
    for (const o of objects(region, budget)) {
      if (Object.hasOwn(o, "action_type")) return { value: o };
      firstObject ??= o;
    }
  }
  if (firstObject) return { invalid: "the JSON object in the answer has no action_type" };
  return { invalid: "the answer holds no JSON object" };
}
