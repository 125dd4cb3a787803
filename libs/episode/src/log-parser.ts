/**
 * Turns logcat records into task events with the task's log_parsing_config (task-format.md §6, §7.7):
 * every listener whose regex matches fires (a line may add reward and an extra). Malformed payloads
 * (a numeric group that is not a float, an extra that is not a Python literal, a json_extra that is not a
 * JSON object) are reported as `malformed` events — counted by the caller, never fatal.
 */
import type { LogcatRecord } from "@farm/adb";
import { terminalSafe } from "@farm/terminal-text";
import { pyRegexAround, type LogParsing, type PyMatch, type PyRegex } from "@farm/task";
import { badExtraName, badExtraValue, badReward, LOG_LIMITS } from "./log-bounds.ts";
import { parsePyFloat, parsePyLiteral } from "./py-literal.ts";

export type LogEvent =
  | { kind: "score"; score: number; reward: number }
  | { kind: "reward"; reward: number; source: "reward" | "reward_event" }
  | { kind: "episode_end" }
  | { kind: "extra"; name: string; value: unknown; source: "extra" | "json_extra" }
  | { kind: "malformed"; what: "line" | "score" | "reward" | "extra" | "json_extra"; detail: string };

/** A piece of a log line for a message: cut short, control characters escaped. */
export function excerpt(text: string, max = 200): string {
  return terminalSafe(text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text);
}

/** `re.match(text)` as Python does it: anchored at the start; an empty regex never matches. Linear time. */
export function pyMatch(re: PyRegex, text: string): PyMatch | null {
  if (re.source === "") return null; // upstream compiles empty regexes as `a^`
  return re.match(text);
}

/** The message part after a dialect (b) `log_prefix`, or undefined when the prefix is absent. */
function prefixMatcher(prefix: PyRegex | undefined): ((m: string) => string | undefined) | undefined {
  if (!prefix || prefix.source === "") return undefined;
  const re = pyRegexAround(prefix, "[ ]*", "[ ]");
  return (m) => {
    const r = re.match(m);
    return r ? m.slice(r[0]!.length) : undefined;
  };
}

export class LogParser {
  private lastScore = 0;
  private readonly stripPrefix: ((m: string) => string | undefined) | undefined;

  constructor(private readonly cfg: LogParsing) {
    this.stripPrefix = prefixMatcher(cfg.messagePrefix);
  }

  /** Zero the running score (episode start). */
  reset(): void {
    this.lastScore = 0;
  }

  /** The message the task regexes see, or undefined when the line is dropped (missing dialect (b) prefix). */
  messageOf(rec: Pick<LogcatRecord, "message">): string | undefined {
    const msg = rec.message.replace(/[\r\n]+$/, "");
    return this.stripPrefix ? this.stripPrefix(msg) : msg;
  }

  parse(rec: Pick<LogcatRecord, "message">): LogEvent[] {
    const msg = this.messageOf(rec);
    if (msg === undefined) return [];
    return this.parseMessage(msg);
  }

  parseMessage(msg: string): LogEvent[] {
    if (msg.length > LOG_LIMITS.maxLineChars)
      return [{ kind: "malformed", what: "line", detail: `line of ${msg.length} characters is longer than the ${LOG_LIMITS.maxLineChars} parsed: ${excerpt(msg, 80)}` }];
    const out: LogEvent[] = [];
    const c = this.cfg;
    if (c.score) {
      const m = pyMatch(c.score, msg);
      if (m) {
        const v = parsePyFloat(m[1] ?? "");
        const bad = v === undefined ? "is not a number" : badReward(v);
        if (bad !== undefined || v === undefined) out.push({ kind: "malformed", what: "score", detail: `score ${excerpt(JSON.stringify(m[1] ?? ""), 60)} ${bad}: ${excerpt(msg)}` });
        else {
          out.push({ kind: "score", score: v, reward: v - this.lastScore });
          this.lastScore = v;
        }
      }
    }
    for (const re of c.reward) {
      const m = pyMatch(re, msg);
      if (!m) continue;
      const v = parsePyFloat(m[1] ?? "");
      const bad = v === undefined ? "is not a number" : badReward(v);
      if (bad !== undefined || v === undefined) out.push({ kind: "malformed", what: "reward", detail: `reward ${excerpt(JSON.stringify(m[1] ?? ""), 60)} ${bad}: ${excerpt(msg)}` });
      else out.push({ kind: "reward", reward: v, source: "reward" });
    }
    if (c.episodeEnd.some((re) => pyMatch(re, msg))) out.push({ kind: "episode_end" });
    for (const re of c.extra) {
      const m = pyMatch(re, msg);
      if (!m) continue;
      const name = m.groups?.name;
      const text = m.groups?.extra ?? "";
      if (name === undefined || name === "") {
        out.push({ kind: "malformed", what: "extra", detail: `extra without a name: ${excerpt(msg)}` });
        continue;
      }
      const badName = badExtraName(name);
      if (badName) {
        out.push({ kind: "malformed", what: "extra", detail: `extra ${excerpt(JSON.stringify(name), 60)}: ${badName}` });
        continue;
      }
      const p = parsePyLiteral(text);
      const badValue = p.ok ? badExtraValue(p.value) : p.error;
      if (p.ok && badValue === undefined) out.push({ kind: "extra", name, value: p.value, source: "extra" });
      else out.push({ kind: "malformed", what: "extra", detail: `extra ${excerpt(JSON.stringify(name), 60)}: ${badValue}: ${excerpt(text)}` });
    }
    for (const re of c.jsonExtra) {
      const m = pyMatch(re, msg);
      if (!m) continue;
      const text = m.groups?.json_extra ?? m[1] ?? "";
      let obj: unknown;
      try {
        obj = JSON.parse(text);
      } catch {
        out.push({ kind: "malformed", what: "json_extra", detail: `invalid JSON: ${excerpt(text)}` });
        continue;
      }
      if (obj === null || typeof obj !== "object" || Array.isArray(obj)) {
        out.push({ kind: "malformed", what: "json_extra", detail: `json_extra is not an object: ${excerpt(text)}` });
        continue;
      }
      const badValue = badExtraValue(obj);
      if (badValue) {
        out.push({ kind: "malformed", what: "json_extra", detail: `json_extra ${badValue}: ${excerpt(text)}` });
        continue;
      }
      // JSON.parse makes own properties even for "__proto__": every name is just a name.
      for (const [name, value] of Object.entries(obj as Record<string, unknown>)) {
        const badName = badExtraName(name);
        if (badName) out.push({ kind: "malformed", what: "json_extra", detail: `json_extra name ${excerpt(JSON.stringify(name), 60)}: ${badName}` });
        else out.push({ kind: "extra", name, value, source: "json_extra" });
      }
    }
    for (const ev of c.rewardEvent) if (pyMatch(ev.event, msg)) out.push({ kind: "reward", reward: ev.reward, source: "reward_event" });
    return out;
  }
}
