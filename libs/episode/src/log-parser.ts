/**
 * Turns logcat records into task events with the task's log_parsing_config (task-format.md §6, §7.7):
 * every listener whose regex matches fires (a line may add reward and an extra). Malformed payloads
 * (a numeric group that is not a float, an extra that is not a Python literal, a json_extra that is not a
 * JSON object) are reported as `malformed` events — counted by the caller, never fatal.
 */
import type { LogcatRecord } from "@farm/adb";
import { pyRegexAround, type LogParsing, type PyMatch, type PyRegex } from "@farm/task";
import { parsePyFloat, parsePyLiteral } from "./py-literal.ts";

export type LogEvent =
  | { kind: "score"; score: number; reward: number }
  | { kind: "reward"; reward: number; source: "reward" | "reward_event" }
  | { kind: "episode_end" }
  | { kind: "extra"; name: string; value: unknown; source: "extra" | "json_extra" }
  | { kind: "malformed"; what: "score" | "reward" | "extra" | "json_extra"; detail: string };

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
    const out: LogEvent[] = [];
    const c = this.cfg;
    if (c.score) {
      const m = pyMatch(c.score, msg);
      if (m) {
        const v = parsePyFloat(m[1] ?? "");
        if (v === undefined || Number.isNaN(v)) out.push({ kind: "malformed", what: "score", detail: `score ${JSON.stringify(m[1] ?? "")} is not a number: ${msg}` });
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
      if (v === undefined || Number.isNaN(v)) out.push({ kind: "malformed", what: "reward", detail: `reward ${JSON.stringify(m[1] ?? "")} is not a number: ${msg}` });
      else out.push({ kind: "reward", reward: v, source: "reward" });
    }
    if (c.episodeEnd.some((re) => pyMatch(re, msg))) out.push({ kind: "episode_end" });
    for (const re of c.extra) {
      const m = pyMatch(re, msg);
      if (!m) continue;
      const name = m.groups?.name;
      const text = m.groups?.extra ?? "";
      if (name === undefined || name === "") {
        out.push({ kind: "malformed", what: "extra", detail: `extra without a name: ${msg}` });
        continue;
      }
      const p = parsePyLiteral(text);
      if (p.ok) out.push({ kind: "extra", name, value: p.value, source: "extra" });
      else out.push({ kind: "malformed", what: "extra", detail: `extra '${name}': ${p.error}: ${text}` });
    }
    for (const re of c.jsonExtra) {
      const m = pyMatch(re, msg);
      if (!m) continue;
      const text = m.groups?.json_extra ?? m[1] ?? "";
      let obj: unknown;
      try {
        obj = JSON.parse(text);
      } catch (e) {
        out.push({ kind: "malformed", what: "json_extra", detail: `invalid JSON: ${text}` });
        continue;
      }
      if (obj === null || typeof obj !== "object" || Array.isArray(obj)) {
        out.push({ kind: "malformed", what: "json_extra", detail: `json_extra is not an object: ${text}` });
        continue;
      }
      for (const [name, value] of Object.entries(obj as Record<string, unknown>)) out.push({ kind: "extra", name, value, source: "json_extra" });
    }
    for (const ev of c.rewardEvent) if (pyMatch(ev.event, msg)) out.push({ kind: "reward", reward: ev.reward, source: "reward_event" });
    return out;
  }
}
