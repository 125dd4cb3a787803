/**
 * Label guards: every label value passes through one, so a metric's series count stays bounded
 * whatever callers send. Out-of-bounds values are mapped to "other" (never thrown: metrics must not
 * break the code path they observe) and counted in farm_metric_label_overflow_total{metric,label}.
 */
import { OTHER } from "./vocabulary.ts";

export type LabelGuard = (value: string) => string;

export type OverflowReporter = (metric: string, label: string, value: string) => void;

/** A closed set: anything else becomes "other". */
export function closedLabel(metric: string, label: string, values: readonly string[], report: OverflowReporter): LabelGuard {
  const allowed = new Set(values);
  return (value) => {
    if (allowed.has(value)) return value;
    report(metric, label, value);
    return OTHER;
  };
}

export interface OpenLabelLimits {
  /** Distinct values kept; later new values become "other". */
  maxValues: number;
  /** Values that do not match (e.g. an id with spaces or a path) become "other". */
  pattern: RegExp;
}

/**
 * An open set with a cap, for ids from a finite but not fixed pool (task ids, adb ops, queue names):
 * the first `maxValues` distinct well-formed values are kept as they are. The cap is per guard, and
 * guards are shared between the metrics that use the same label (one task set for all task metrics).
 * `quiet` maps the value the same way (a well-formed value under the cap still takes a slot) but does not
 * report or count an overflow: for declaring series, which records nothing.
 */
export function cappedLabel(label: string, limits: OpenLabelLimits, report: OverflowReporter): (metric: string, value: string, quiet?: boolean) => string {
  const seen = new Set<string>();
  return (metric, value, quiet = false) => {
    if (seen.has(value)) return value;
    if (value !== OTHER && limits.pattern.test(value) && seen.size < limits.maxValues) {
      seen.add(value);
      return value;
    }
    if (!quiet) report(metric, label, value);
    return OTHER;
  };
}
