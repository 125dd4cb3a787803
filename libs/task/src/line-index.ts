/**
 * Where each field of a task file is written: text-format field path (`setup_steps[0].adb_call.rotate`) → line.
 * Built from the token stream, guided by the reflected schema only to know which fields are repeated (paths index
 * repeated fields, as validation messages do). Lenient: stops quietly at input protobufjs would reject anyway.
 */
import type protobuf from "protobufjs";
import { tokenize, type Token } from "./lexer.ts";
import { FarmError } from "@farm/errors";

export interface FieldOccurrence {
  path: string;
  name: string;
  line: number;
  /** For a scalar value: how it is written (a string literal, or a word/number with its sign) and its field. */
  scalar?: { text: string; quoted: boolean; field?: protobuf.Field };
}

export class LineIndex {
  private readonly byPath = new Map<string, number>();
  constructor(readonly occurrences: FieldOccurrence[]) {
    for (const o of occurrences) if (!this.byPath.has(o.path)) this.byPath.set(o.path, o.line);
  }

  /** Line of `path`, else of its closest written ancestor, else 1. */
  lineOf(path: string): number {
    let p = path;
    while (p) {
      const line = this.byPath.get(p);
      if (line !== undefined) return line;
      p = parentPath(p);
    }
    return 1;
  }

  has(path: string): boolean {
    return this.byPath.has(path);
  }

  /** Whether any field with this name is written anywhere in the file. */
  mentions(name: string): boolean {
    return this.occurrences.some((o) => o.name === name);
  }

  /** The last field written at or before `line` (for attributing protobufjs syntax errors). */
  fieldAt(line: number, name?: string): FieldOccurrence | undefined {
    let best: FieldOccurrence | undefined;
    for (const o of this.occurrences) {
      if (o.line > line) break;
      if (name === undefined || o.name === name) best = o;
    }
    return best;
  }
}

function parentPath(path: string): string {
  if (path.endsWith("]")) return path.slice(0, path.lastIndexOf("["));
  const dot = path.lastIndexOf(".");
  return dot < 0 ? "" : path.slice(0, dot);
}

class Stop extends FarmError<"end_of_input"> {
  /** the same input fails the same way (not retryable). */
  constructor() {
    super("end_of_input", "the tokens end inside a field");
  }
}

export function indexFieldLines(text: string, type: protobuf.Type | undefined, tokens: readonly Token[] = tokenize(text)): LineIndex {
  const occurrences: FieldOccurrence[] = [];
  let pos = 0;
  const peek = (): Token | undefined => tokens[pos];
  const next = (): Token => {
    const t = tokens[pos++];
    if (!t) throw new Stop();
    return t;
  };
  const isPunct = (t: Token | undefined, p: string): boolean => t?.kind === "punct" && t.text === p;

  const scalar = (at: FieldOccurrence, field: protobuf.Field | undefined): void => {
    const t = next();
    if (t.kind === "string") {
      while (peek()?.kind === "string") pos++;
      at.scalar = { text: t.text, quoted: true, field };
    } else if (isPunct(t, "-")) {
      at.scalar = { text: `-${next().text}`, quoted: false, field };
    } else if (t.kind === "word") {
      at.scalar = { text: t.text, quoted: false, field };
    } else {
      throw new Stop();
    }
  };

  const message = (prefix: string, msgType: protobuf.Type | undefined, close: string | null): void => {
    const counts = new Map<string, number>();
    for (;;) {
      const t = peek();
      if (!t) {
        if (close) throw new Stop();
        return;
      }
      if (close && isPunct(t, close)) {
        pos++;
        return;
      }
      if (isPunct(t, ",") || isPunct(t, ";")) {
        pos++;
        continue;
      }
      if (t.kind !== "word") throw new Stop();
      pos++;
      const field = msgType?.fields[t.text];
      const childType = field?.resolvedType && "fields" in field.resolvedType ? (field.resolvedType as protobuf.Type) : undefined;
      const repeated = field?.repeated ?? false;
      const record = (line: number): string => {
        const index = counts.get(t.text) ?? 0;
        counts.set(t.text, index + 1);
        const path = `${prefix}${t.text}${repeated ? `[${index}]` : ""}`;
        occurrences.push({ path, name: t.text, line });
        return path;
      };
      const last = (): FieldOccurrence => occurrences[occurrences.length - 1]!;
      if (isPunct(peek(), ":")) pos++;
      const v = peek();
      if (isPunct(v, "[")) {
        pos++;
        while (!isPunct(peek(), "]")) {
          if (isPunct(peek(), ",")) {
            pos++;
            continue;
          }
          const el = next();
          if (isPunct(el, "{") || isPunct(el, "<")) {
            message(`${record(el.line)}.`, childType, el.text === "{" ? "}" : ">");
          } else {
            pos--;
            record(el.line);
            scalar(last(), field);
          }
        }
        pos++;
      } else if (isPunct(v, "{") || isPunct(v, "<")) {
        pos++;
        message(`${record(t.line)}.`, childType, v!.text === "{" ? "}" : ">");
      } else {
        record(t.line);
        scalar(last(), field);
      }
    }
  };

  try {
    message("", type, null);
  } catch (e) {
    if (!(e instanceof Stop)) throw e;
  }
  return new LineIndex(occurrences);
}
