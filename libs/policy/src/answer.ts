/**
 * Every answer of `Policy.act` goes through `readAnswer`: an AndroidEnv action (checked by `parseAction`, a bad
 * one throws as before: the policy broke its contract), or a UI action, valid or recorded as invalid with its
 * reason (an agent's mistake the episode survives), unwrapped from a `PolicyDecision` when it came in one.
 */
import { parseAction } from "./action.ts";
import type { Action, PolicyAnswer, PolicyDecision, PolicyUsage } from "./types.ts";
import { looksLikeUiAction, parseUiAction, type UiAction } from "./ui-action.ts";

/** Longest `given` text kept with a step (a model's answer can be long). */
export const GIVEN_MAX_CHARS = 4000;

export type ReadAnswer = { given: string; usage?: PolicyUsage; version?: string; instruction?: string } & ({ kind: "touch"; action: Action } | { kind: "ui"; ui: UiAction } | { kind: "invalid"; reason: string });

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

/** Longest policy version kept with a step. */
export const POLICY_VERSION_MAX_CHARS = 128;

/**
 * A policy version as a policy reports it: a string of 1-128 characters without control characters, or a whole
 * number (kept as its decimal text); undefined when absent (undefined or null). Throws a plain Error for anything else.
 */
export function readPolicyVersion(v: unknown, field = "version"): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === "number" && Number.isSafeInteger(v)) return String(v);
  if (typeof v === "string" && v.length >= 1 && v.length <= POLICY_VERSION_MAX_CHARS && !/[\u0000-\u001f\u007f-\u009f]/.test(v)) return v;
  throw new Error(`${field} must be a string of 1-${POLICY_VERSION_MAX_CHARS} printable characters or a whole number`);
}

/** Normalises an answer; throws (a plain Error saying what is wrong) for a malformed AndroidEnv action or version. */
export function readAnswer(value: unknown): ReadAnswer {
  if (!isDecision(value)) return readAction(value, jsonText(value));
  const usage = readUsage(value.usage);
  const version = readPolicyVersion(value.version);
  const given = typeof value.given === "string" ? clip(value.given) : jsonText(value.action ?? null);
  const instruction = typeof value.instruction === "string" && value.instruction ? value.instruction.slice(0, 2000) : undefined;
  // Assigned, not spread together: on Node 20 a literal of spreads that add keys costs ~1 µs, once per step here.
  const withUsage: { usage?: PolicyUsage; version?: string; instruction?: string } = {};
  if (usage) withUsage.usage = usage;
  if (version !== undefined) withUsage.version = version;
  if (instruction !== undefined) withUsage.instruction = instruction;
  if (value.action === undefined || value.action === null) {
    const reason = typeof value.invalid === "string" && value.invalid ? value.invalid.slice(0, 500) : "the policy gave no action";
    return { kind: "invalid", reason, given, ...withUsage };
  }
  return Object.assign(readAction(value.action, given), withUsage);
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
  const usage: { usage?: PolicyUsage; version?: string } = {};
  if (r.usage) usage.usage = r.usage;
  if (r.version !== undefined) usage.version = r.version;
  if (r.kind === "invalid") return { invalid: r.reason, given: r.given, ...usage };
  return { action: r.kind === "touch" ? r.action : r.ui, given: r.given, ...usage };
}

/**
 * An answer of the HTTP policy protocol (PROTOCOL.md, "Policy versions"): a bare action or a decision, optionally with
 * `policy_version` at its top level; `headerVersion` (the response's X-Policy-Version) counts when the body names
 * none. Checked as `parseAnswer` does; the version travels as the decision's `version`.
 */
export function parseWireAnswer(value: unknown, headerVersion?: string): PolicyAnswer {
  let body = value;
  let bodyVersion: string | undefined;
  if (typeof value === "object" && value !== null && !Array.isArray(value) && Object.hasOwn(value, "policy_version")) {
    const { policy_version: v, ...rest } = value as Record<string, unknown>;
    bodyVersion = readPolicyVersion(v, "policy_version");
    body = rest;
  }
  const answer = parseAnswer(body);
  const decision = isDecision(answer) ? (answer as PolicyDecision) : undefined;
  // The body's policy_version, else a decision's own version, else the response's header.
  const version = bodyVersion ?? decision?.version ?? headerVersion;
  if (version === undefined) return answer;
  if (decision) return Object.assign({}, decision, { version });
  return { action: answer as Action | UiAction, given: jsonText(answer), version };
}
