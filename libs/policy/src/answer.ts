/**
 * Every answer of `Policy.act` goes through `readAnswer`: an AndroidEnv action (checked by `parseAction`, a bad
 * one throws as before: the policy broke its contract), or a UI action, valid or recorded as invalid with its
 * reason (an agent's mistake the episode survives), unwrapped from a `PolicyDecision` when it came in one.
 */
import { parseAction } from "./action.ts";
import type { Action, PolicyAnswer, PolicyUsage } from "./types.ts";
import { looksLikeUiAction, parseUiAction, type UiAction } from "./ui-action.ts";

/** Longest `given` text kept with a step (a model's answer can be long). */
export const GIVEN_MAX_CHARS = 4000;

export type ReadAnswer = { given: string; usage?: PolicyUsage; instruction?: string } & ({ kind: "touch"; action: Action } | { kind: "ui"; ui: UiAction } | { kind: "invalid"; reason: string });

function isDecision(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  return !Object.hasOwn(v, "actionType") && !Object.hasOwn(v, "action_type") && (Object.hasOwn(v, "action") || Object.hasOwn(v, "invalid"));
}

function clip(s: string): string {
  return s.length > GIVEN_MAX_CHARS ? s.slice(0, GIVEN_MAX_CHARS) : s;
}

function jsonText(v: unknown): string {
  try {
    return clip(JSON.stringify(v) ?? String(v));
  } catch {
    return clip(String(v));
  }
}

/** Normalises an answer; throws (a plain Error saying what is wrong) only for a malformed AndroidEnv action. */
export function readAnswer(value: unknown): ReadAnswer {
  if (!isDecision(value)) return readAction(value, jsonText(value));
  const usage = readUsage(value.usage);
  const given = typeof value.given === "string" ? clip(value.given) : jsonText(value.action ?? null);
  const instruction = typeof value.instruction === "string" && value.instruction ? value.instruction.slice(0, 2000) : undefined;
  const withUsage = { ...(usage ? { usage } : {}), ...(instruction !== undefined ? { instruction } : {}) };
  if (value.action === undefined || value.action === null) {
    const reason = typeof value.invalid === "string" && value.invalid ? value.invalid.slice(0, 500) : "the policy gave no action";
    return { kind: "invalid", reason, given, ...withUsage };
  }
  return { ...readAction(value.action, given), ...withUsage };
}

function readAction(value: unknown, given: string): ReadAnswer {
  if (looksLikeUiAction(value)) {
    const ui = parseUiAction(value);
    return "invalid" in ui ? { kind: "invalid", reason: ui.invalid, given } : { kind: "ui", ui, given };
  }
  return { kind: "touch", action: parseAction(value), given };
}

function readUsage(v: unknown): PolicyUsage | undefined {
  if (typeof v !== "object" || v === null) return undefined;
  const u = v as Record<string, unknown>;
  const out: PolicyUsage = {};
  for (const k of ["promptTokens", "completionTokens", "latencyMs", "attempts"] as const) {
    const n = u[k];
    if (typeof n === "number" && Number.isFinite(n) && n >= 0) out[k] = n;
  }
  return Object.keys(out).length ? out : undefined;
}

/**
 * For a policy that passes on an untrusted answer (a module, a server): checks it as `readAnswer` does and
 * returns a fresh copy (never the foreign object itself): a bare action stays bare, an invalid UI action or a
 * decision comes back as a decision; throws for a malformed AndroidEnv action.
 */
export function parseAnswer(value: unknown): PolicyAnswer {
  const r = readAnswer(value);
  const bare = !isDecision(value);
  if (r.kind === "touch" && bare) return r.action;
  if (r.kind === "ui" && bare) return r.ui;
  const usage = r.usage ? { usage: r.usage } : {};
  if (r.kind === "invalid") return { invalid: r.reason, given: r.given, ...usage };
  return { action: r.kind === "touch" ? r.action : r.ui, given: r.given, ...usage };
}
