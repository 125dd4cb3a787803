/**
 * Parser for the simulated `sh`: lists (`;`, `&`, newline), and-or chains (`&&`, `||`), pipelines
 * (`|`), simple commands with redirections, and `while … do … done` (adbkit's boot-wait loop).
 */
import { tokenize, ShellSyntaxError, type Token, type RedirOp } from "./lexer.ts";

export interface Redirection {
  fd: number;
  op: RedirOp;
  target: string;
}
export interface SimpleCommand {
  type: "simple";
  words: string[];
  redirs: Redirection[];
}
export interface WhileLoop {
  type: "while";
  cond: CommandList;
  body: CommandList;
  redirs: Redirection[];
}
export type Command = SimpleCommand | WhileLoop;
export interface Pipeline {
  type: "pipeline";
  commands: Command[];
}
export interface AndOr {
  type: "andor";
  first: Pipeline;
  rest: { op: "&&" | "||"; pipeline: Pipeline }[];
}
export interface CommandList {
  type: "list";
  items: AndOr[];
}

const RESERVED_TERMINATORS = new Set(["do", "done"]);

export function parseCommandLine(line: string): CommandList {
  const p = new Parser(tokenize(line));
  const list = p.parseList(new Set());
  if (!p.atEnd()) throw new ShellSyntaxError(`'${p.describeNext()}' unexpected`);
  return list;
}

class Parser {
  private pos = 0;
  constructor(private readonly tokens: Token[]) {}

  atEnd(): boolean {
    return this.pos >= this.tokens.length;
  }

  describeNext(): string {
    const t = this.tokens[this.pos];
    if (!t) return "end of input";
    return t.kind === "word" ? t.text : t.op;
  }

  private peek(): Token | undefined {
    return this.tokens[this.pos];
  }

  private isReservedWord(word: string): boolean {
    const t = this.peek();
    return t?.kind === "word" && !t.quoted && t.text === word;
  }

  private atTerminator(terms: Set<string>): boolean {
    const t = this.peek();
    return t?.kind === "word" && !t.quoted && terms.has(t.text);
  }

  parseList(terms: Set<string>): CommandList {
    const items: AndOr[] = [];
    for (;;) {
      while (this.peek()?.kind === "op" && (this.peek() as { op: string }).op === ";") this.pos++;
      if (this.atEnd() || this.atTerminator(terms)) break;
      items.push(this.parseAndOr(terms));
      const t = this.peek();
      if (t?.kind === "op" && (t.op === ";" || t.op === "&")) {
        this.pos++;
        continue;
      }
      break;
    }
    return { type: "list", items };
  }

  private parseAndOr(terms: Set<string>): AndOr {
    const first = this.parsePipeline(terms);
    const rest: AndOr["rest"] = [];
    for (;;) {
      const t = this.peek();
      if (t?.kind === "op" && (t.op === "&&" || t.op === "||")) {
        this.pos++;
        rest.push({ op: t.op, pipeline: this.parsePipeline(terms) });
      } else break;
    }
    return { type: "andor", first, rest };
  }

  private parsePipeline(terms: Set<string>): Pipeline {
    const commands: Command[] = [this.parseCommand(terms)];
    for (;;) {
      const t = this.peek();
      if (t?.kind === "op" && t.op === "|") {
        this.pos++;
        commands.push(this.parseCommand(terms));
      } else break;
    }
    return { type: "pipeline", commands };
  }

  private parseCommand(terms: Set<string>): Command {
    if (this.isReservedWord("while")) {
      this.pos++;
      const cond = this.parseList(RESERVED_TERMINATORS);
      this.expectReserved("do");
      const body = this.parseList(RESERVED_TERMINATORS);
      this.expectReserved("done");
      const redirs = this.parseRedirections();
      return { type: "while", cond, body, redirs };
    }
    const words: string[] = [];
    const redirs: Redirection[] = [];
    for (;;) {
      const t = this.peek();
      if (!t || t.kind === "op") break;
      if (t.kind === "word") {
        if (words.length === 0 && redirs.length === 0 && this.atTerminator(terms)) break;
        words.push(t.text);
        this.pos++;
      } else {
        redirs.push(this.parseRedirection());
      }
    }
    if (words.length === 0 && redirs.length === 0) throw new ShellSyntaxError(`'${this.describeNext()}' unexpected`);
    return { type: "simple", words, redirs };
  }

  private parseRedirections(): Redirection[] {
    const out: Redirection[] = [];
    while (this.peek()?.kind === "redir") out.push(this.parseRedirection());
    return out;
  }

  private parseRedirection(): Redirection {
    const t = this.tokens[this.pos++] as Extract<Token, { kind: "redir" }>;
    const target = this.tokens[this.pos];
    if (target?.kind !== "word") throw new ShellSyntaxError(`'${this.describeNext()}' unexpected`);
    this.pos++;
    const fd = t.fd ?? (t.op === "<" || t.op === "<&" ? 0 : 1);
    return { fd, op: t.op, target: target.text };
  }

  private expectReserved(word: string): void {
    if (!this.isReservedWord(word)) throw new ShellSyntaxError(`'${this.describeNext()}' unexpected (expected '${word}')`);
    this.pos++;
  }
}
