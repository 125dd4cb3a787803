/**
 * Python `re` syntax → a matcher with re.match semantics (anchored at the start) that runs in linear time
 * (task-format.md §6.4). The pattern is parsed as Python parses it (regex/parse.ts) and run by a Pike VM
 * (regex/engine.ts) over code points, so `.`, classes, `\d \w \s \b` mean what they mean for a Python str.
 * Constructs that need backtracking — backreferences, lookaround, conditionals, atomic groups, possessive
 * quantifiers — and inline flags are refused with a PyRegexError naming the construct.
 */
import type { PyMatch, PyRegex } from "./model.ts";
import { compile, MAX_PROGRAM, run, type Program } from "./regex/engine.ts";
import type { CharSet } from "./regex/charset.ts";
import { MAX_REPEAT, parsePython, RegexSyntaxError } from "./regex/parse.ts";
import { requiredPrefix, startsWithSets } from "./regex/prefix.ts";
import { FarmError } from "@farm/errors";

export class PyRegexError extends FarmError<"invalid_regex"> {
  override readonly name = "PyRegexError";
  /** the same input fails the same way (not retryable). */
  constructor(message: string) {
    super("invalid_regex", message);
  }
}

/** Longest regex source accepted from a task file. */
export const MAX_REGEX_LENGTH = 1000;
export const REGEX_LIMITS = { maxSourceChars: MAX_REGEX_LENGTH, maxRepeat: MAX_REPEAT, maxStates: MAX_PROGRAM } as const;

class CompiledPyRegex implements PyRegex {
  constructor(
    readonly source: string,
    private readonly program: Program | undefined,
    private readonly names: ReadonlyMap<string, number>,
    private readonly prefix: readonly CharSet[] = [],
  ) {}

  match(text: string): PyMatch | null {
    if (!this.program || !startsWithSets(text, this.prefix)) return null;
    const slots = run(this.program, text, true);
    if (!slots) return null;
    const m: (string | undefined)[] & { groups?: Record<string, string | undefined> } = [];
    for (let g = 0; g * 2 < slots.length; g++) {
      const a = slots[2 * g]!;
      const b = slots[2 * g + 1]!;
      m[g] = a >= 0 && b >= 0 ? text.slice(a, b) : undefined;
    }
    const groups: Record<string, string | undefined> = Object.create(null);
    for (const [name, index] of this.names) groups[name] = m[index];
    m.groups = groups;
    return m as unknown as PyMatch;
  }

  test(text: string): boolean {
    return this.program !== undefined && startsWithSets(text, this.prefix) && run(this.program, text, false) !== null;
  }

  /** JSON (task show, hashes) carries the Python source. */
  toJSON(): string {
    return this.source;
  }
}

/** Compiled regexes by pattern: real task sets repeat the same few (a compiled regex is immutable). */
const cache = new Map<string, PyRegex>();
const CACHE_MAX = 2000;

function build(source: string, pattern: string, checkLength = true): PyRegex {
  if (source === "") return new CompiledPyRegex(source, undefined, new Map());
  const key = `${source.length}:${source}\u0000${pattern}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const compiled = compileFresh(source, pattern, checkLength);
  if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value!);
  cache.set(key, compiled);
  return compiled;
}

function compileFresh(source: string, pattern: string, checkLength: boolean): PyRegex {
  if (checkLength && source.length > MAX_REGEX_LENGTH) throw new PyRegexError(`regex of ${source.length} characters is longer than the ${MAX_REGEX_LENGTH} allowed`);
  try {
    const parsed = parsePython(pattern);
    return new CompiledPyRegex(source, compile(parsed), parsed.names, requiredPrefix(parsed.root));
  } catch (e) {
    if (e instanceof RegexSyntaxError) throw new PyRegexError(`${e.message} of ${JSON.stringify(source)}`);
    throw e;
  }
}

/** Parse and compile; throws PyRegexError for Python syntax errors and unsupported constructs. */
export function pyRegex(source: string): PyRegex {
  return build(source, source);
}

/** Like pyRegex, but matching the whole text (the early-2021 runtime matched `^…$`); `source` stays as written. */
export function pyRegexWhole(source: string): PyRegex {
  const alone = build(source, source); // validates it on its own: "a)(b" must not become valid by wrapping
  return source === "" ? alone : build(source, `(?:${source})$`);
}

/** A regex around a validated one, e.g. the dialect (b) prefix inside `[ ]*(?:prefix)[ ]`. */
export function pyRegexAround(inner: PyRegex, before: string, after: string): PyRegex {
  const pattern = `${before}(?:${inner.source})${after}`;
  return build(pattern, pattern, false);
}
