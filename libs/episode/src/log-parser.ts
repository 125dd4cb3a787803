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

/** What a listener's match adds to the line's events; `score` carries the running score between lines. */
type OnMatch = (m: PyMatch, msg: string, out: LogEvent[], score: { last: number }) => void;

interface Listener {
  re: PyRegex;
  on: OnMatch;
}

/** One kind of listener of log_parsing_config: its regexes and what a match yields. */
interface ListenerKind {
  listeners(c: LogParsing): Listener[];
  /** One event however many of its regexes match. */
  once?: boolean;
}

/** A float group checked as a reward; a bad one is a `malformed` event of `what`. */
function numberOf(m: PyMatch, msg: string, what: "score" | "reward", out: LogEvent[]): number | undefined {
  const v = parsePyFloat(m[1] ?? "");
  const bad = v === undefined ? "is not a number" : badReward(v);
  if (bad === undefined && v !== undefined) return v;
  out.push({ kind: "malformed", what, detail: `${what} ${excerpt(JSON.stringify(m[1] ?? ""), 60)} ${bad}: ${excerpt(msg)}` });
  return undefined;
}

const onScore: OnMatch = (m, msg, out, score) => {
  const v = numberOf(m, msg, "score", out);
  if (v === undefined) return;
  out.push({ kind: "score", score: v, reward: v - score.last });
  score.last = v;
};

const onReward: OnMatch = (m, msg, out) => {
  const v = numberOf(m, msg, "reward", out);
  if (v !== undefined) out.push({ kind: "reward", reward: v, source: "reward" });
};

const onExtra: OnMatch = (m, msg, out) => {
  const name = m.groups?.name;
  const text = m.groups?.extra ?? "";
  if (name === undefined || name === "") return void out.push({ kind: "malformed", what: "extra", detail: `extra without a name: ${excerpt(msg)}` });
  const badName = badExtraName(name);
  if (badName) return void out.push({ kind: "malformed", what: "extra", detail: `extra ${excerpt(JSON.stringify(name), 60)}: ${badName}` });
  const p = parsePyLiteral(text);
  const badValue = p.ok ? badExtraValue(p.value) : p.error;
  if (p.ok && badValue === undefined) out.push({ kind: "extra", name, value: p.value, source: "extra" });
  else out.push({ kind: "malformed", what: "extra", detail: `extra ${excerpt(JSON.stringify(name), 60)}: ${badValue}: ${excerpt(text)}` });
};

const onJsonExtra: OnMatch = (m, _msg, out) => {
  const text = m.groups?.json_extra ?? m[1] ?? "";
  const malformed = (detail: string) => void out.push({ kind: "malformed", what: "json_extra", detail });
  let obj: unknown;
  try {
    obj = JSON.parse(text);
  } catch {
    return malformed(`invalid JSON: ${excerpt(text)}`);
  }
  if (obj === null || typeof obj !== "object" || Array.isArray(obj)) return malformed(`json_extra is not an object: ${excerpt(text)}`);
  const badValue = badExtraValue(obj);
  if (badValue) return malformed(`json_extra ${badValue}: ${excerpt(text)}`);
  // JSON.parse makes own properties even for "__proto__": every name is just a name.
  for (const [name, value] of Object.entries(obj as Record<string, unknown>)) {
    const badName = badExtraName(name);
    if (badName) malformed(`json_extra name ${excerpt(JSON.stringify(name), 60)}: ${badName}`);
    else out.push({ kind: "extra", name, value, source: "json_extra" });
  }
};

const onEpisodeEnd: OnMatch = (_m, _msg, out) => void out.push({ kind: "episode_end" });

/** The listeners in the order their events come out of one line. */
const KINDS: readonly ListenerKind[] = [
  { listeners: (c) => (c.score ? [{ re: c.score, on: onScore }] : []) },
  { listeners: (c) => c.reward.map((re) => ({ re, on: onReward })) },
  { listeners: (c) => c.episodeEnd.map((re) => ({ re, on: onEpisodeEnd })), once: true },
  { listeners: (c) => c.extra.map((re) => ({ re, on: onExtra })) },
  { listeners: (c) => c.jsonExtra.map((re) => ({ re, on: onJsonExtra })) },
  { listeners: (c) => c.rewardEvent.map((ev) => ({ re: ev.event, on: (_m, _msg, out) => void out.push({ kind: "reward", reward: ev.reward, source: "reward_event" }) })) },
];

export class LogParser {
  private readonly score = { last: 0 };
  private readonly stripPrefix: ((m: string) => string | undefined) | undefined;
  /** The task's listeners, kind by kind (built once; each line runs one loop over them). */
  private readonly kinds: ReadonlyArray<{ listeners: Listener[]; once: boolean }>;

  constructor(cfg: LogParsing) {
    this.stripPrefix = prefixMatcher(cfg.messagePrefix);
    this.kinds = KINDS.map((k) => ({ listeners: k.listeners(cfg), once: k.once === true })).filter((k) => k.listeners.length > 0);
  }

  /** Zero the running score (episode start). */
  reset(): void {
    this.score.last = 0;
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
    for (const kind of this.kinds) {
      for (const l of kind.listeners) {
        const m = pyMatch(l.re, msg);
        if (!m) continue;
        l.on(m, msg, out, this.score);
        if (kind.once) break;
      }
    }
    return out;
  }
}
