/** The comparisons of FAMILIES.md "Checks": an observed value against what the check expects, with `{name}` rendered. */
import { pyRegexAround, type Comparison, type PyRegex, type TaskParams } from "@farm/task";
import { fuzzyEquals } from "./fuzzy.ts";
import { jsonText, parseJsonPath, selectJsonPath } from "./json-path.ts";
import { renderText } from "./render.ts";

export interface Verdict {
  passed: boolean;
  /** What was expected, rendered (`== "1"`, `regex ^on$`, `exists`, …). */
  expected: string;
  /** Replaces the observed value in the record (the json path's value). */
  observed?: string;
}

/** Python's `re.search`: the task format's linear-time regex, preceded by "anything", so it may match anywhere. */
export function regexSearch(re: PyRegex, text: string): boolean {
  return pyRegexAround(re, "[\\s\\S]*?", "").test(text);
}

const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

export function parseNumber(s: string): number | undefined {
  const t = s.trim();
  if (!NUMBER.test(t)) return undefined;
  const n = Number(t);
  return Number.isFinite(n) ? n : undefined;
}

function compareNumbers(a: number, op: string, b: number): boolean {
  switch (op) {
    case "==":
      return a === b;
    case "!=":
      return a !== b;
    case "<":
      return a < b;
    case "<=":
      return a <= b;
    case ">":
      return a > b;
    case ">=":
      return a >= b;
    default:
      return false;
  }
}

/** A value comparison (everything but `exists`, which only the sources that can tell existence make). */
export function compareValue(observed: string, cmp: Comparison, params: TaskParams): Verdict {
  switch (cmp.kind) {
    case "equals": {
      const v = renderText(cmp.value, params);
      return { passed: observed === v, expected: `== ${JSON.stringify(v)}` };
    }
    case "not_equals": {
      const v = renderText(cmp.value, params);
      return { passed: observed !== v, expected: `!= ${JSON.stringify(v)}` };
    }
    case "regex":
      return { passed: regexSearch(cmp.regex, observed), expected: `regex ${cmp.regex.source}` };
    case "number": {
      const n = parseNumber(observed);
      return { passed: n !== undefined && compareNumbers(n, cmp.op, cmp.value), expected: `number ${cmp.op} ${cmp.value}` };
    }
    case "fuzzy": {
      const v = renderText(cmp.value, params);
      return { passed: fuzzyEquals(observed, v), expected: `fuzzy ${JSON.stringify(v)}` };
    }
    case "json": {
      let parsed: unknown;
      try {
        parsed = JSON.parse(observed);
      } catch {
        return { passed: false, expected: `json ${cmp.path} (the value is not JSON)` };
      }
      const picked = selectJsonPath(parsed, parseJsonPath(cmp.path));
      if (picked === undefined) return { passed: false, expected: `json ${cmp.path} ${compareValue("", cmp.then, params).expected}`, observed: `(nothing at ${cmp.path})` };
      const text = jsonText(picked);
      const inner = compareValue(text, cmp.then, params);
      return { passed: inner.passed, expected: `json ${cmp.path} ${inner.expected}`, observed: text };
    }
    case "exists":
      return { passed: false, expected: cmp.value ? "exists" : "not exists" };
  }
}
