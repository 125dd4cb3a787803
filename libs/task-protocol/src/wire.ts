/**
 * The task server's answers (README "Answers"), checked strictly: an exchange answer is exactly one of
 * `device_call`, `result`, `error`; a phase's result has the fields its phase allows and nothing else.
 */
import { z } from "zod";

/** Session and call ids: short, printable, safe in a URL path segment. */
export const ID = /^[A-Za-z0-9_.-]{1,64}$/;
const id = z.string().regex(ID, "1-64 of [A-Za-z0-9_.-]");

export const PHASES = ["initialize", "score"] as const;
export type Phase = (typeof PHASES)[number] | "close";

export const answerSchema = z
  .strictObject({
    session: id.optional(),
    phase: z.enum(PHASES).optional(),
    device_call: z.strictObject({ id, request: z.unknown() }).optional(),
    result: z.unknown().optional(),
    error: z.strictObject({ type: z.string().max(200).optional(), message: z.string().max(8000), traceback: z.string().max(64_000).optional() }).optional(),
  })
  .superRefine((a, ctx) => {
    const set = (["device_call", "result", "error"] as const).filter((k) => a[k] !== undefined);
    if (set.length !== 1) ctx.addIssue({ code: "custom", message: set.length === 0 ? "one of device_call, result, error must be set" : `only one of ${set.join(", ")} may be set` });
  });
export type Answer = z.output<typeof answerSchema>;

/** Parameter names as task code writes them (AndroidWorld: snake_case), bounded. */
const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const json = z.json();

export const initializeResultSchema = z.strictObject({
  goal: z.string().min(1).max(2000), // the farm's bound on a goal (README, "Goals and observations")
  params: z
    .record(z.string().regex(PARAM_NAME, "a parameter name: [A-Za-z_][A-Za-z0-9_]{0,63}"), json)
    .refine((r) => Object.keys(r).length <= 64, "at most 64 parameters")
    .optional(),
});

export const scoreResultSchema = z.strictObject({
  success: z.number().min(0).max(1),
  reward: z.number().refine(Number.isFinite, "a finite number").optional(),
  details: json.optional(),
  checks: z
    .array(
      z.strictObject({
        name: z.string().min(1).max(128),
        passed: z.boolean(),
        observed: z.string().max(4096).optional(),
        expected: z.string().max(4096).optional(),
      }),
    )
    .max(64)
    .optional(),
});

/** The first issue of a failed parse as `path: message`, with the path written from `root`. */
export function firstIssue(err: z.ZodError, root: string): string {
  const i = err.issues[0];
  if (!i) return `${root}: invalid`;
  const p = i.path.map((s) => (typeof s === "number" ? `[${s}]` : `.${String(s)}`)).join("");
  return `${root}${p}: ${i.message}`;
}
