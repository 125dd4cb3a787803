/**
 * `{name}` placeholders (FAMILIES.md "Substitution") rendered with an episode's parameters: as plain text, or as
 * one shell-quoted word per placeholder for device shell command lines. `{{` / `}}` are literal braces.
 */
import { shQuote } from "@farm/shell-words";
import type { ParamValue, TaskParams, Template } from "@farm/task";
import { ScoringError } from "./errors.ts";

const PLACEHOLDER = /\{\{|\}\}|\{([a-z][a-z0-9_]{0,63})\}/g;

function render(t: Template, params: TaskParams, word: (v: string) => string): string {
  return t.text.replace(PLACEHOLDER, (whole, name: string | undefined) => {
    if (whole === "{{") return "{";
    if (whole === "}}") return "}";
    if (!Object.hasOwn(params, name!)) throw new ScoringError("unknown_param", `line ${t.line}: {${name}} names no parameter of this episode`);
    return word(paramText(params[name!]!));
  });
}

/** A parameter value as text: numbers as JavaScript prints them, booleans as `true`/`false`. */
export function paramText(v: ParamValue): string {
  return String(v);
}

/** The template with each `{name}` replaced by its value. */
export function renderText(t: Template, params: TaskParams): string {
  return render(t, params, (v) => v);
}

/** The template as a device shell command line: each `{name}` becomes one quoted word, nothing drawn reaches the shell unquoted. */
export function renderShell(t: Template, params: TaskParams): string {
  return render(t, params, shQuote);
}
