/** Test helpers: Python regexes compiled the way the task loader does (start-anchored, no u flag). */
import type { LogParsing, PyRegex } from "@farm/task";

export function py(source: string): PyRegex {
  const js = source.replace(/\(\?P</g, "(?<").replace(/\(\?P=(\w+)\)/g, "\\k<$1>");
  return { source, regex: new RegExp(`^(?:${js})`) };
}

/** The canonical regexes of task-format.md §6.1. */
export function canonicalLogParsing(over: Partial<LogParsing> = {}): LogParsing {
  return {
    filters: ["AndroidRLTask:V"],
    score: py("^[Ss]core: ([-+]?[0-9]*\\.?[0-9]*)$"),
    reward: [py("^[Rr]eward: ([-+]?[0-9]*\\.?[0-9]*)$")],
    episodeEnd: [py("^episode[ _]end$")],
    extra: [py("^extra: (?P<name>[^ ]*)[ ]?(?P<extra>.*)$")],
    jsonExtra: [py("^json_extra: (?P<json_extra>.*)$")],
    rewardEvent: [],
    ...over,
  };
}
