/** Test helpers: Python regexes compiled by the task loader's own translation (start-anchored, no u flag). */
import { pyRegex as py, type LogParsing } from "@farm/task";

export { py };

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
