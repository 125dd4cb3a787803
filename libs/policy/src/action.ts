/**
 * Building and validating actions. Every action a policy returns goes through `parseAction`, so the
 * episode runner can trust the shape (task-format.md §9: TOUCH / LIFT / REPEAT, position in [0,1]²).
 */
import type { Action, ActionType } from "./types.ts";

export const ACTION_TYPES: readonly ActionType[] = ["TOUCH", "LIFT", "REPEAT"];

export function touch(x: number, y: number): Action {
  return { actionType: "TOUCH", touchPosition: [x, y] };
}

/** LIFT ignores the position; [0, 0] keeps the field present as the contract asks. */
export function lift(): Action {
  return { actionType: "LIFT", touchPosition: [0, 0] };
}

export function repeat(): Action {
  return { actionType: "REPEAT", touchPosition: [0, 0] };
}

function isUnit(v: unknown): v is number {
  return typeof v === "number" && Number.isFinite(v) && v >= 0 && v <= 1;
}

/**
 * Checks an untrusted value (JSON from a file, a server or a user module) and returns a fresh Action.
 * Throws a plain Error whose message says what is wrong; callers prefix where it came from.
 * `touchPosition` may be omitted for LIFT and REPEAT (it is ignored there).
 */
export function parseAction(value: unknown): Action {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new Error(`expected an object like {"actionType":"TOUCH","touchPosition":[0.5,0.5]}, got ${describe(value)}`);
  }
  const v = value as Record<string, unknown>;
  const type = v.actionType;
  if (typeof type !== "string" || !(ACTION_TYPES as readonly string[]).includes(type)) {
    throw new Error(`actionType must be one of ${ACTION_TYPES.join(", ")}, got ${describe(type)}`);
  }
  const actionType = type as ActionType;
  const pos = v.touchPosition;
  if (pos === undefined && actionType !== "TOUCH") return { actionType, touchPosition: [0, 0] };
  if (!Array.isArray(pos) || pos.length !== 2 || !isUnit(pos[0]) || !isUnit(pos[1])) {
    throw new Error(`touchPosition must be [x, y] with both numbers in [0, 1], got ${describe(pos)}`);
  }
  return { actionType, touchPosition: [pos[0], pos[1]] };
}

/** A short rendering of a bad value for error messages. */
export function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  let s: string;
  try {
    s = JSON.stringify(value) ?? String(value);
  } catch {
    s = String(value);
  }
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}
