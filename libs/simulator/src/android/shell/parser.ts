/**
 * Parser for the simulated `sh` (mksh's grammar, the parts scripts sent over adb use): lists (`;`,
 * `&`, newline), and-or chains (`&&`, `||`), pipelines (`|`, a leading `!` negates), simple commands
 * with assignments and redirections, and the compound commands `if … then … elif … else … fi`,
 * `while|until … do … done`, `for NAME [in WORDS]; do … done` and `{ …; }`.
 * Not parsed (a syntax error names them): `case`, functions, subshells `( … )`.
 */
import { tokenize, ShellSyntaxError, type Token, type RedirOp, type Word } from "./lexer.ts";

export type { Word };

export interface Redirection {
  fd: number;
  op: RedirOp;
  target: Word;
}
export interface SimpleCommand {
  type: "simple";
  words: Word[];
  redirs: Redirection[];
}
export interface WhileLoop {
  type: "while";
  /** `until`: the body runs while the condition fails. */
  until: boolean;
  cond: CommandList;
  body: CommandList;
  redirs: Redirection[];
}
export interface ForLoop {
  type: "for";
  name: string;
  /** undefined: `for x; do` (the positional parameters, none here). */
  items: Word[] | undefined;
  body: CommandList;
  redirs: Redirection[];
}
export interface IfClause {
  type: "if";
  /** `if` and each `elif`: a condition and its branch, tried in order. */
  branches: { cond: CommandList; body: CommandList }[];
  otherwise: CommandList | undefined;
  redirs: Redirection[];
}
export interface BraceGroup {
  type: "group";
  body: CommandList;
  redirs: Redirection[];
}
export type Command = SimpleCommand | WhileLoop | ForLoop | IfClause | BraceGroup;
export interface Pipeline {
  type: "pipeline";
  negate: boolean;
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

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Reserved words that end a list; they may not start a command. */
const CLOSERS = new Set(["then", "elif", "else", "fi", "do", "done", "}", "esac", "in"]);
const UNSUPPORTED = new Set(["case", "function", "select"]);

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

  /** The next token is the unquoted reserved word `word`. */
  private isReserved(word: string): boolean {
    const t = this.peek();
    return t?.kind === "word" && !t.quoted && t.text === word;
  }

  private atTerminator(terms: Set<string>): boolean {
    const t = this.peek();
    return t?.kind === "word" && !t.quoted && terms.has(t.text);
  }

  private skipSeparators(): void {
    while (this.peek()?.kind === "op" && (this.peek() as { op: string }).op === ";") this.pos++;
  }

  parseList(terms: Set<string>): CommandList {
    const items: AndOr[] = [];
    for (;;) {
      this.skipSeparators();
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

  /** A list that must end at one of `terms` and hold at least one command (mksh refuses `if ; then`). */
  private parseBody(terms: Set<string>, what: string): CommandList {
    const list = this.parseList(terms);
    if (list.items.length === 0) throw new ShellSyntaxError(`'${this.describeNext()}' unexpected (empty ${what})`);
    if (!this.atTerminator(terms)) throw new ShellSyntaxError(`'${this.describeNext()}' unexpected (expected ${[...terms].map((t) => `'${t}'`).join(" or ")})`);
    return list;
  }

  private parseAndOr(terms: Set<string>): AndOr {
    const first = this.parsePipeline(terms);
    const rest: AndOr["rest"] = [];
    for (;;) {
      const t = this.peek();
      if (t?.kind === "op" && (t.op === "&&" || t.op === "||")) {
        this.pos++;
        this.skipSeparators(); // a newline may follow && / ||
        rest.push({ op: t.op, pipeline: this.parsePipeline(terms) });
      } else break;
    }
    return { type: "andor", first, rest };
  }

  private parsePipeline(terms: Set<string>): Pipeline {
    let negate = false;
    while (this.isReserved("!")) {
      this.pos++;
      negate = !negate;
    }
    const commands: Command[] = [this.parseCommand(terms)];
    for (;;) {
      const t = this.peek();
      if (t?.kind === "op" && t.op === "|") {
        this.pos++;
        this.skipSeparators();
        commands.push(this.parseCommand(terms));
      } else break;
    }
    return { type: "pipeline", negate, commands };
  }

  private parseCommand(terms: Set<string>): Command {
    const t = this.peek();
    if (t?.kind === "word" && !t.quoted) {
      switch (t.text) {
        case "if":
          return this.parseIf();
        case "while":
        case "until":
          return this.parseWhile(t.text === "until");
        case "for":
          return this.parseFor();
        case "{":
          return this.parseGroup();
      }
      if (UNSUPPORTED.has(t.text)) throw new ShellSyntaxError(`'${t.text}' is not supported by this shell`);
      if (CLOSERS.has(t.text) && !terms.has(t.text)) throw new ShellSyntaxError(`'${t.text}' unexpected`);
    }
    const words: Word[] = [];
    const redirs: Redirection[] = [];
    for (;;) {
      const next = this.peek();
      if (!next || next.kind === "op") break;
      if (next.kind === "word") {
        if (words.length === 0 && redirs.length === 0 && this.atTerminator(terms)) break;
        words.push(next);
        this.pos++;
      } else {
        redirs.push(this.parseRedirection());
      }
    }
    if (words.length === 0 && redirs.length === 0) throw new ShellSyntaxError(`'${this.describeNext()}' unexpected`);
    return { type: "simple", words, redirs };
  }

  private parseIf(): IfClause {
    this.pos++; // if
    const branches: IfClause["branches"] = [];
    let otherwise: CommandList | undefined;
    for (;;) {
      const cond = this.parseBody(new Set(["then"]), "condition");
      this.pos++; // then
      const body = this.parseBody(new Set(["elif", "else", "fi"]), "then-part");
      branches.push({ cond, body });
      if (this.isReserved("elif")) {
        this.pos++;
        continue;
      }
      if (this.isReserved("else")) {
        this.pos++;
        otherwise = this.parseBody(new Set(["fi"]), "else-part");
      }
      break;
    }
    this.expectReserved("fi");
    return { type: "if", branches, otherwise, redirs: this.parseRedirections() };
  }

  private parseWhile(until: boolean): WhileLoop {
    this.pos++; // while / until
    const cond = this.parseBody(new Set(["do"]), "condition");
    const body = this.parseDoGroup();
    return { type: "while", until, cond, body, redirs: this.parseRedirections() };
  }

  private parseFor(): ForLoop {
    this.pos++; // for
    const nameTok = this.peek();
    if (nameTok?.kind !== "word" || nameTok.quoted || !NAME.test(nameTok.text)) throw new ShellSyntaxError(`for: '${this.describeNext()}' is not an identifier`);
    this.pos++;
    let items: Word[] | undefined;
    this.skipSeparators();
    if (this.isReserved("in")) {
      this.pos++;
      items = [];
      for (;;) {
        const w = this.peek();
        if (!w || w.kind !== "word") break;
        items.push(w);
        this.pos++;
      }
      const sep = this.peek();
      if (sep?.kind !== "op" || sep.op !== ";") throw new ShellSyntaxError(`'${this.describeNext()}' unexpected (expected ';' or newline before 'do')`);
      this.skipSeparators();
    }
    const body = this.parseDoGroup();
    return { type: "for", name: nameTok.text, items, body, redirs: this.parseRedirections() };
  }

  private parseDoGroup(): CommandList {
    this.expectReserved("do");
    const body = this.parseBody(new Set(["done"]), "loop body");
    this.pos++; // done
    return body;
  }

  private parseGroup(): BraceGroup {
    this.pos++; // {
    const body = this.parseBody(new Set(["}"]), "group");
    this.pos++; // }
    return { type: "group", body, redirs: this.parseRedirections() };
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
    return { fd, op: t.op, target };
  }

  private expectReserved(word: string): void {
    if (!this.isReserved(word)) throw new ShellSyntaxError(`'${this.describeNext()}' unexpected (expected '${word}')`);
    this.pos++;
  }
}
