/**
 * The agent options of `farm submit` and `farm run` (issue 28): goals (`--goal TEXT`, `--goals FILE.jsonl`), what a
 * step observes (`--observe pixels,a11y`, `--frame-every`, `--a11y-every`) and `--max-invalid-actions`.
 *
 * The parsers, loaded by the commands' actions; the flags themselves are added by agent-flags.ts (light, for
 * registration).
 *
 * `--observe` says what the trajectory records: `pixels` → a frame every `--frame-every` steps (default 1), `a11y`
 * → the screen as a tree and its element list every `--a11y-every` steps (default 1); a kind left out is not
 * recorded (its every-N is 0, and giving its every-N flag is an error). It does not limit the policy: a policy that
 * needs pixels or elements gets them every step regardless. Without `--observe` the flags act as before (frames as
 * `--frame-every` or the config's default, no trees unless `--a11y-every`).
 */
import { readFile, stat } from "node:fs/promises";
import { FarmError, coerceError } from "@farm/errors";
import { gameConfigProblem, goalForEpisode, goalSchema, paramsProblem, type EpisodeGoal } from "@farm/queue/goals";
import { fixedParamsProblem } from "@farm/scoring/params";
import type { TaskFamily, TaskParams } from "@farm/task";
import { terminalSafe } from "@farm/terminal-text";
import { parseIntOption, shown } from "./options.ts";
import type { AgentFlags, ObserveFlags } from "./agent-flags.ts";
import { formatSettleSpec, parseSettleSpec } from "@farm/episode/settle-spec";

export const OBSERVE_KINDS = ["pixels", "a11y"] as const;
export type ObserveKind = (typeof OBSERVE_KINDS)[number];

/**
 * One episode's goal, optional game config and, for a task family, fixed params (FAMILIES.md), as the scheduler's
 * API takes them. `goal` is absent only on a family's line with params (the family renders its goal template).
 */
export type GoalLine = EpisodeGoal;

/** What a goals file is checked against when the task is known: a family's parameters, or a plain task (no params). */
export interface GoalsTask {
  family?: Pick<TaskFamily, "params" | "taskServer">;
}

const LINE_SHAPE = '{"goal": "...", "game_config": {...}, "params": {...}} (each optional, at least one)';

/** Bounds of a goals file: the scheduler takes at most 10,000 goals in a request of at most 1 MiB. */
export const GOALS_MAX_LINES = 10_000;
const GOALS_MAX_BYTES = 1 << 20;

/** A bad agent option or goals file: says which flag, file:line and field, and what to give instead. */
export class AgentOptionError extends FarmError<"agent_option"> {
  constructor(message: string) {
    super("agent_option", message);
    this.name = "AgentOptionError";
  }
}

/** `--observe pixels,a11y` → the kinds (each at most once); undefined when absent. */
export function parseObserve(v: string | undefined): Set<ObserveKind> | undefined {
  if (v === undefined) return undefined;
  const kinds = new Set<ObserveKind>();
  for (const raw of v.split(",")) {
    const k = raw.trim();
    if (!(OBSERVE_KINDS as readonly string[]).includes(k)) throw new AgentOptionError(`--observe takes a comma-separated list of ${OBSERVE_KINDS.join(", ")} (each optional), got '${shown(k)}' in '${shown(v)}'`);
    kinds.add(k as ObserveKind);
  }
  return kinds;
}

/** `--max-staleness V [--on-stale mark|end]`: the job's `staleness` (issue 38; libs/episode policy-versions.ts). */
export type StalenessOption = { maxVersions: number; onStale?: "mark" | "end" };

export function stalenessOf(o: ObserveFlags): StalenessOption | undefined {
  const maxVersions = parseIntOption("max-staleness", o.maxStaleness, 0, 1_000_000);
  const on = o.onStale;
  if (on !== undefined && on !== "mark" && on !== "end") throw new AgentOptionError(`--on-stale takes mark or end, got '${shown(on)}'`);
  if (maxVersions === undefined) {
    if (on !== undefined) throw new AgentOptionError("--on-stale goes with --max-staleness V");
    return undefined;
  }
  return { maxVersions, ...(on === "end" ? { onStale: "end" as const } : {}) };
}

/** `--observation-budget-mb N [--on-observation-budget stop|end]`: the job's `observationBudget`. */
export type ObservationBudgetOption = { maxMb: number; onExceeded?: "stop_recording" | "end" };

function observationBudgetOf(o: ObserveFlags): ObservationBudgetOption | undefined {
  const maxMb = parseIntOption("observation-budget-mb", o.observationBudgetMb, 1, 16_384);
  const on = o.onObservationBudget;
  if (on !== undefined && on !== "stop" && on !== "end") throw new AgentOptionError(`--on-observation-budget takes stop or end, got '${shown(on)}'`);
  if (maxMb === undefined) {
    if (on !== undefined) throw new AgentOptionError("--on-observation-budget goes with --observation-budget-mb N");
    return undefined;
  }
  return { maxMb, ...(on === "end" ? { onExceeded: "end" as const } : {}) };
}

/** The recording cadences, invalid-action limit and observation budget the flags ask for (only what was asked: defaults stay elsewhere). */
export function observationOptions(o: ObserveFlags): { frameEvery?: number; a11yEvery?: number; maxInvalidActions?: number; observationBudget?: ObservationBudgetOption; staleness?: StalenessOption; settle?: string } {
  const kinds = parseObserve(o.observe);
  const cadence = (kind: ObserveKind, flag: string, v: string | undefined): number | undefined => {
    const n = parseIntOption(flag, v);
    if (!kinds) return n;
    if (!kinds.has(kind)) {
      if (n !== undefined && n > 0) throw new AgentOptionError(`--${flag} ${n} records ${kind}, but --observe '${shown(o.observe!)}' leaves ${kind} out; add it to --observe or drop --${flag}`);
      return 0;
    }
    return n ?? 1;
  };
  const frameEvery = cadence("pixels", "frame-every", o.frameEvery);
  const a11yEvery = cadence("a11y", "a11y-every", o.a11yEvery);
  const maxInvalidActions = parseIntOption("max-invalid-actions", o.maxInvalidActions, 0, 1_000_000);
  const observationBudget = observationBudgetOf(o);
  const staleness = stalenessOf(o);
  // The one parser of settle specs (@farm/episode): a bad one names --settle and the forms it takes.
  const settle = o.settle !== undefined ? formatSettleSpec(parseSettleSpec(o.settle, "--settle")) : undefined;
  return {
    ...(settle !== undefined ? { settle } : {}),
    ...(observationBudget ? { observationBudget } : {}),
    ...(staleness ? { staleness } : {}),
    ...(frameEvery !== undefined ? { frameEvery } : {}),
    ...(a11yEvery !== undefined ? { a11yEvery } : {}),
    ...(maxInvalidActions !== undefined ? { maxInvalidActions } : {}),
  };
}

/** `--goal TEXT`, checked as the job checks it. */
export function parseGoalOption(v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  const r = goalSchema.safeParse(v);
  if (!r.success) throw new AgentOptionError(`--goal: ${r.error.issues[0]?.message ?? "invalid"}`);
  return r.data;
}

/**
 * A goals file: JSON Lines, each `{"goal"?: "...", "game_config"?: {...}, "params"?: {...}}` (blank lines skipped);
 * episode i gets line i mod N. Every problem names file:line and the field. With `task`, lines are also checked
 * against it: params only for a family and fitting its declarations, a goal on every line of a plain task.
 */
export async function readGoalsFile(file: string, task?: GoalsTask): Promise<GoalLine[]> {
  // The whole path (an editor jumps to file:line), printable; the OS bounds its length.
  const name = terminalSafe(file);
  const size = await stat(file).then((s) => s.size, (e: unknown) => {
    throw new AgentOptionError(`--goals ${name}: cannot read it (${coerceError(e).message})`);
  });
  if (size > GOALS_MAX_BYTES) throw new AgentOptionError(`--goals ${name}: ${size} bytes; at most ${GOALS_MAX_BYTES} (split the campaign)`);
  const goals: GoalLine[] = [];
  const lines = (await readFile(file, "utf8")).split("\n");
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i]!.trim();
    if (text === "") continue;
    if (goals.length === GOALS_MAX_LINES) throw new AgentOptionError(`${name}:${i + 1}: more than ${GOALS_MAX_LINES} goals; at most ${GOALS_MAX_LINES} per campaign`);
    goals.push(goalLine(text, `${name}:${i + 1}`, task));
  }
  if (goals.length === 0) throw new AgentOptionError(`--goals ${name}: no goals (one JSON object a line: ${LINE_SHAPE})`);
  return goals;
}

function goalLine(text: string, where: string, task: GoalsTask | undefined): GoalLine {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new AgentOptionError(`${where}: not JSON (${coerceError(e).message}); each line is ${LINE_SHAPE}`);
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw new AgentOptionError(`${where}: a line is a JSON object ${LINE_SHAPE}`);
  const line = v as Record<string, unknown>;
  const unknown = Object.keys(line).find((k) => k !== "goal" && k !== "game_config" && k !== "params");
  if (unknown !== undefined) throw new AgentOptionError(`${where}: unknown field '${shown(unknown)}'; a line has "goal", "game_config" and "params" (each optional)`);
  const out: GoalLine = {};
  if (Object.hasOwn(line, "goal")) {
    const goal = goalSchema.safeParse(line.goal);
    if (!goal.success) throw new AgentOptionError(`${where}: field goal: ${typeof line.goal === "string" ? (goal.error.issues[0]?.message ?? "invalid") : "must be text"}`);
    out.goal = goal.data;
  }
  if (Object.hasOwn(line, "game_config")) {
    const problem = gameConfigProblem(line.game_config);
    if (problem) throw new AgentOptionError(`${where}: field game_config: ${problem}`);
    out.gameConfig = line.game_config as Record<string, unknown>;
  }
  if (Object.hasOwn(line, "params")) {
    const problem = paramsProblem(line.params);
    if (problem) throw new AgentOptionError(`${where}: field params: ${problem}`);
    const params: Record<string, string | number | boolean> = Object.create(null);
    for (const [k, value] of Object.entries(line.params as Record<string, string | number | boolean>)) params[k] = value;
    out.params = Object.freeze(params);
  }
  if (out.goal === undefined && out.gameConfig === undefined && out.params === undefined) throw new AgentOptionError(`${where}: an empty line object; give goal, game_config or params (${LINE_SHAPE})`);
  // Without the task at hand, only a line with params (a family's) may leave the goal out; the scheduler checks the rest.
  if (!task && out.goal === undefined && out.params === undefined) throw new AgentOptionError(`${where}: field goal: missing; only a task family's line with params may leave it out`);
  if (task) {
    const family = task.family;
    if (!family && out.params !== undefined) throw new AgentOptionError(`${where}: field params: the task is not a task family; only a family (*.family.yaml, libs/task/FAMILIES.md) takes params`);
    if (!family && out.goal === undefined) throw new AgentOptionError(`${where}: field goal: missing; only a task family renders its goal from params`);
    const problem = family && out.params && !family.taskServer ? fixedParamsProblem(family.params, out.params) : undefined;
    if (problem) throw new AgentOptionError(`${where}: field params: ${problem}`);
  }
  return out;
}

/**
 * The goals the flags give: `--goal` (one) or `--goals FILE` (many), not both; undefined for neither. With `task`
 * (the task file was loaded here), a goals file is checked against it (readGoalsFile).
 */
export async function goalsOf(o: AgentFlags, task?: GoalsTask): Promise<GoalLine[] | undefined> {
  if (o.goal !== undefined && o.goals !== undefined) throw new AgentOptionError("use either --goal TEXT or --goals FILE.jsonl, not both");
  const one = parseGoalOption(o.goal);
  if (one !== undefined) return [{ goal: one }];
  return o.goals !== undefined ? readGoalsFile(o.goals, task) : undefined;
}

/** What `farm run` passes to each `runEpisode` from the agent flags (`task`: the loaded task the goals are checked against). */
export async function agentRunOptions(o: AgentFlags, task?: GoalsTask): Promise<{
  frameEvery?: number;
  gameConfigs: boolean;
  forEpisode(i: number): { goal?: string; gameConfig?: Record<string, unknown>; a11yEvery?: number; settle?: string; limits?: { maxInvalidActions?: number; observationBudget?: { maxBytes: number; onExceeded?: "stop_recording" | "end" } }; staleness?: StalenessOption };
  /** Episode i's fixed family parameters (its goals line's `params`), for the episode's task instance; undefined: all drawn. */
  paramsFor(i: number): TaskParams | undefined;
}> {
  const obs = observationOptions(o);
  const goals = await goalsOf(o, task);
  return {
    ...(obs.frameEvery !== undefined ? { frameEvery: obs.frameEvery } : {}),
    gameConfigs: goals?.some((g) => g.gameConfig !== undefined) ?? false,
    paramsFor: (i) => goalForEpisode(goals, i).params,
    forEpisode: (i) => ({
      ...withoutParams(goalForEpisode(goals, i)),
      ...(obs.a11yEvery !== undefined ? { a11yEvery: obs.a11yEvery } : {}),
      ...(obs.staleness ? { staleness: obs.staleness } : {}),
      ...(obs.settle !== undefined ? { settle: obs.settle } : {}),
      ...(obs.maxInvalidActions !== undefined || obs.observationBudget
        ? {
            limits: {
              ...(obs.maxInvalidActions !== undefined ? { maxInvalidActions: obs.maxInvalidActions } : {}),
              ...(obs.observationBudget ? { observationBudget: { maxBytes: obs.observationBudget.maxMb * 1024 * 1024, ...(obs.observationBudget.onExceeded ? { onExceeded: obs.observationBudget.onExceeded } : {}) } } : {}),
            },
          }
        : {}),
    }),
  };
}

function withoutParams(g: GoalLine): { goal?: string; gameConfig?: Record<string, unknown> } {
  const { params: _params, ...rest } = g;
  return rest;
}
