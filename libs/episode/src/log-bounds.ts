/**
 * Bounds on what log lines may make the farm hold or compute (documented in libs/episode/README.md). Android's
 * logger caps a message near 4 KB, so real lines are far below them; they exist so a hostile app cannot block
 * the event loop, exhaust memory or put non-finite numbers into a committed trajectory.
 */
import { TASK_LIMITS } from "@farm/task";

export const LOG_LIMITS = Object.freeze({
  /** A longer message is counted (`log_line_too_long`) and not parsed (regexes run in linear time in its length). */
  maxLineChars: 16_384,
  /** Nesting of a Python-literal or JSON extra value. */
  maxValueDepth: 32,
  /** Elements (leaves) of one extra value; also the extras_spec bound. */
  maxValueElements: TASK_LIMITS.maxShapeElements,
  /** Characters of an extra's name. */
  maxExtraNameChars: 128,
  /** Distinct extra names buffered per step (values beyond: `extras_overflowed`). */
  maxExtraNamesPerStep: 256,
  /** |reward| and |score| of one line; larger (or non-finite) values are malformed, so sums stay finite. */
  maxAbsReward: TASK_LIMITS.maxAbsReward,
});

/** Control and bidi characters: refused in extra names (they become Avro map keys and log fields). */
const NAME_FORBIDDEN = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** Why an extra name from a log line is unusable, or undefined when it is fine (any other name is just a name). */
export function badExtraName(name: string): string | undefined {
  if (name === "") return "empty name";
  if (name.length > LOG_LIMITS.maxExtraNameChars) return `name longer than ${LOG_LIMITS.maxExtraNameChars} characters`;
  if (NAME_FORBIDDEN.test(name)) return "name with a control character";
  return undefined;
}

/** Why a reward/score value is unusable, or undefined. */
export function badReward(v: number): string | undefined {
  if (!Number.isFinite(v)) return "is not a finite number";
  if (Math.abs(v) > LOG_LIMITS.maxAbsReward) return `is beyond ±${LOG_LIMITS.maxAbsReward}`;
  return undefined;
}

/**
 * Why a parsed extra value is unusable (too deep, too many elements, a non-finite number), or undefined.
 * Iterative, so no value can exhaust the stack.
 */
export function badExtraValue(value: unknown): string | undefined {
  const stack: [unknown, number][] = [[value, 0]];
  let leaves = 0;
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (depth > LOG_LIMITS.maxValueDepth) return `nested deeper than ${LOG_LIMITS.maxValueDepth} levels`;
    if (Array.isArray(v)) {
      for (const x of v) stack.push([x, depth + 1]);
    } else if (v !== null && typeof v === "object") {
      for (const x of Object.values(v as object)) stack.push([x, depth + 1]);
    } else {
      if (++leaves > LOG_LIMITS.maxValueElements) return `more than ${LOG_LIMITS.maxValueElements} elements`;
      if (typeof v === "number" && !Number.isFinite(v)) return "holds a non-finite number";
    }
  }
  return undefined;
}
