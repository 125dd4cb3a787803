/**
 * A campaign's goals (issue 28): one line each of a goal text, a game config and a task family's fixed params, their
 * bounds and checks, and which line an episode gets. The episode job carries one line (episode-job.ts); `farm submit`
 * and `farm run` check a goals file with the same schemas before any Redis client is loaded (`@farm/queue/goals`).
 */
import { z } from "zod";

/** Bounds of a per-episode goal (issue 28): goal texts of GUI-agent data sets are a sentence or two. */
export const GOAL_MAX_CHARS = 2000;
/** Bounds of a per-episode game config: its JSON text, as passed in the app's start intent. */
export const GAME_CONFIG_MAX_CHARS = 4096;

/** A goal text: non-empty, bounded, no control characters but tab and newline (it reaches logs and prompts). */
export const goalSchema = z
  .string()
  .min(1, "must not be empty")
  .max(GOAL_MAX_CHARS, `at most ${GOAL_MAX_CHARS} characters`)
  .refine((g) => !/[\u0000-\u0008\u000b-\u001f\u007f]/.test(g), "no control characters (tab and newline are fine)");

/** Why `v` is not a game config (a JSON object of at most GAME_CONFIG_MAX_CHARS characters), or undefined. */
export function gameConfigProblem(v: unknown): string | undefined {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return "must be a JSON object, e.g. {\"title\": \"milk\"}";
  let text: string | undefined;
  try {
    text = JSON.stringify(v);
  } catch {
    return "must be plain JSON";
  }
  if (text === undefined || text.length > GAME_CONFIG_MAX_CHARS) return `at most ${GAME_CONFIG_MAX_CHARS} characters of JSON`;
  return undefined;
}

/** An app's RL_TASK_GAME_CONFIG for one episode; kept as given (no copy: zod's record would rebuild it key by key). */
export const gameConfigSchema = z.custom<Record<string, unknown>>((v) => gameConfigProblem(v) === undefined, {
  error: (iss) => gameConfigProblem(iss.input) ?? "invalid",
});

/**
 * Bounds of an episode's fixed task-family parameters (libs/task/FAMILIES.md; the same numbers as the family loader's
 * FAMILY_LIMITS): at most 64 names of `[a-z][a-z0-9_]{0,63}`, each a string of at most 2000 characters (no control
 * characters but tab and newline), a finite number or a boolean.
 */
export const PARAMS_MAX = 64;
export const PARAM_VALUE_MAX_CHARS = 2000;
const PARAM_NAME = /^[a-z][a-z0-9_]{0,63}$/;
const PARAM_BAD_CHARS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** Why `v` is not a set of parameters (a JSON object of bounded scalars), or undefined. */
export function paramsProblem(v: unknown): string | undefined {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return 'must be a JSON object of parameter values, e.g. {"state": "on"}';
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return "must be a plain JSON object";
  const names = Object.keys(v);
  if (names.length > PARAMS_MAX) return `${names.length} parameters; at most ${PARAMS_MAX}`;
  for (const name of names) {
    const shown = JSON.stringify(name.slice(0, 64));
    if (!PARAM_NAME.test(name)) return `${shown} is not a parameter name (1-64 lower case letters, digits and _, starting with a letter)`;
    const value = (v as Record<string, unknown>)[name];
    if (typeof value === "string") {
      if (value.length > PARAM_VALUE_MAX_CHARS) return `${name}: ${value.length} characters; at most ${PARAM_VALUE_MAX_CHARS}`;
      if (PARAM_BAD_CHARS.test(value)) return `${name}: no control characters (tab and newline are fine)`;
    } else if (typeof value !== "boolean" && !(typeof value === "number" && Number.isFinite(value))) return `${name}: must be a string, a finite number or a boolean`;
  }
  return undefined;
}

/** An episode's fixed parameters, as a frozen null-prototype object (names are data, never keys of a plain object). */
export const paramsSchema = z
  .custom<Record<string, string | number | boolean>>((v) => paramsProblem(v) === undefined, { error: (iss) => paramsProblem(iss.input) ?? "invalid" })
  .describe("a JSON object: parameter name ([a-z][a-z0-9_]{0,63}) → a string of at most 2000 characters, a number or a boolean; at most 64")
  .transform((v): Readonly<Record<string, string | number | boolean>> => {
    const out: Record<string, string | number | boolean> = Object.create(null);
    for (const name of Object.keys(v)) out[name] = v[name]!;
    return Object.freeze(out);
  });

/** One line of a campaign's goals (`--goals FILE.jsonl`, the API's `goals`): any of a goal text, a game config, fixed params. */
export interface EpisodeGoal {
  goal?: string;
  gameConfig?: Record<string, unknown>;
  params?: Readonly<Record<string, string | number | boolean>>;
}

/**
 * Episode `index`'s goal line: goals[index mod N], with only the fields it has; nothing when there are no goals.
 * The one rule of `farm run`, `farm submit` and the scheduler.
 */
export function goalForEpisode(goals: readonly EpisodeGoal[] | undefined, index: number): EpisodeGoal {
  const g = goals?.length ? goals[index % goals.length] : undefined;
  if (!g) return {};
  return {
    ...(g.goal !== undefined ? { goal: g.goal } : {}),
    ...(g.gameConfig !== undefined ? { gameConfig: g.gameConfig } : {}),
    ...(g.params !== undefined ? { params: g.params } : {}),
  };
}
