/**
 * What every match must start with: the character sets of its first code points, read off the parsed regex.
 * `re.match` is anchored, so a text whose first code points fall outside them cannot match, and checking them
 * is far cheaper than running the VM over a log line that belongs to another listener.
 */
import type { CharSet } from "./charset.ts";
import type { Node } from "./parse.ts";

/** Long enough to tell apart the log lines of one app (e.g. "extra: grid" from "extra: direction"). */
const MAX_PREFIX = 24;

interface Leading {
  sets: CharSet[];
  /** The node always consumes exactly `sets` (so what follows it continues the prefix). */
  fixed: boolean;
}

function leading(n: Node): Leading {
  switch (n.t) {
    case "empty":
    case "assert": // zero-width: constrains nothing the prefix could say
      return { sets: [], fixed: true };
    case "char":
      return { sets: [n.set], fixed: true };
    case "group":
      return leading(n.body);
    case "cat": {
      const sets: CharSet[] = [];
      for (const item of n.items) {
        const l = leading(item);
        sets.push(...l.sets);
        if (!l.fixed || sets.length >= MAX_PREFIX) return { sets, fixed: false };
      }
      return { sets, fixed: true };
    }
    case "repeat": {
      if (n.min === 0) return { sets: [], fixed: false };
      const body = leading(n.body);
      if (!body.fixed) return { sets: body.sets, fixed: false };
      const sets: CharSet[] = [];
      for (let k = 0; k < n.min && sets.length < MAX_PREFIX; k++) sets.push(...body.sets);
      return { sets, fixed: n.min === n.max && sets.length < MAX_PREFIX };
    }
    case "alt":
      return { sets: [], fixed: false };
  }
}

/** The leading sets of a parsed regex (at most MAX_PREFIX; empty when nothing is required). */
export function requiredPrefix(root: Node): CharSet[] {
  return leading(root).sets.slice(0, MAX_PREFIX);
}

/** Whether `text` starts with code points in `sets`, one each, in order. */
export function startsWithSets(text: string, sets: readonly CharSet[]): boolean {
  let pos = 0;
  for (const set of sets) {
    if (pos >= text.length) return false;
    const cp = text.codePointAt(pos)!;
    if (!set.has(cp)) return false;
    pos += cp > 0xffff ? 2 : 1;
  }
  return true;
}
