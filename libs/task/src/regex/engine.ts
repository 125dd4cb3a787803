/**
 * A linear-time regex matcher (Pike VM, after Thompson and Cox): all alternatives advance together over the text,
 * one code point at a time, so the work is O(text length × program size) whatever the pattern — no input can make
 * it backtrack. Leftmost-first priority (as Python's backtracking `re` picks) decides captures and greedy/lazy.
 */
import { isWordCodePoint, type CharSet } from "./charset.ts";
import type { AssertKind, Node, ParsedRegex } from "./parse.ts";
import { RegexSyntaxError } from "./parse.ts";

type Inst =
  | { op: "char"; set: CharSet }
  | { op: "split"; x: number; y: number }
  | { op: "jmp"; to: number }
  | { op: "save"; slot: number }
  | { op: "assert"; kind: AssertKind }
  /** Python's rule for loops: an iteration that consumed nothing ends the loop (go to `exit`). */
  | { op: "progress"; slot: number; exit: number }
  | { op: "match" };

/** Programs above this many instructions are refused: the per-character cost is proportional to it. */
export const MAX_PROGRAM = 4000;

export interface Program {
  insts: Inst[];
  /** Capture slots plus loop-position slots. */
  slots: number;
  /** The capture slots (what a match returns). */
  groupSlots: number;
  /**
   * Loops whose body can match empty. Their captures can differ from Python's in one case: Python ends such a
   * loop with one more, empty, iteration (so `(a?)+` on "aa" captures ""), which a Pike VM cannot always see
   * (it keeps one thread per state). The whole match and its success are the same.
   */
  nullableLoops: number;
  /** Buffers reused across runs (matching is synchronous, so one set per program suffices). */
  scratch?: Scratch;
}

interface Scratch {
  clist: ThreadList;
  nlist: ThreadList;
  seen: Uint32Array;
  generation: number;
  stackPc: Int32Array;
  stackCaps: (Int32Array | null)[];
}

/** Whether `n` can match the empty string. */
function nullable(n: Node): boolean {
  switch (n.t) {
    case "empty":
    case "assert":
      return true;
    case "char":
      return false;
    case "cat":
      return n.items.every(nullable);
    case "alt":
      return n.items.some(nullable);
    case "group":
      return nullable(n.body);
    case "repeat":
      return n.min === 0 || nullable(n.body);
  }
}

export function compile(parsed: ParsedRegex): Program {
  const insts: Inst[] = [];
  /** Slots after the capture slots: where the current iteration of a nullable loop started. */
  let slots = 2 * (parsed.groupCount + 1);
  const emit = (inst: Inst): number => {
    if (insts.length >= MAX_PROGRAM) throw new RegexSyntaxError(`pattern too large for the linear-time engine (over ${MAX_PROGRAM} states; reduce counted repetitions)`);
    insts.push(inst);
    return insts.length - 1;
  };
  const patch = (at: number, inst: Inst): void => {
    insts[at] = inst;
  };

  const gen = (n: Node): void => {
    switch (n.t) {
      case "empty":
        return;
      case "char":
        emit({ op: "char", set: n.set });
        return;
      case "assert":
        emit({ op: "assert", kind: n.kind });
        return;
      case "cat":
        for (const item of n.items) gen(item);
        return;
      case "group":
        emit({ op: "save", slot: 2 * n.index });
        gen(n.body);
        emit({ op: "save", slot: 2 * n.index + 1 });
        return;
      case "alt": {
        const jumps: number[] = [];
        n.items.forEach((item, k) => {
          if (k < n.items.length - 1) {
            const split = emit({ op: "jmp", to: -1 });
            gen(item);
            jumps.push(emit({ op: "jmp", to: -1 }));
            patch(split, { op: "split", x: split + 1, y: insts.length });
          } else gen(item);
        });
        for (const j of jumps) patch(j, { op: "jmp", to: insts.length });
        return;
      }
      case "repeat": {
        for (let k = 0; k < n.min; k++) gen(n.body);
        // A body that can match empty gets Python's rule: an empty iteration is the last one.
        const slot = nullable(n.body) ? slots++ : -1;
        const progress: number[] = [];
        const iteration = (): void => {
          if (slot >= 0) emit({ op: "save", slot });
          gen(n.body);
          if (slot >= 0) progress.push(emit({ op: "jmp", to: -1 }));
        };
        if (n.max === Infinity) {
          // L: split body, out; body; jmp L
          const split = emit({ op: "jmp", to: -1 });
          iteration();
          emit({ op: "jmp", to: split });
          const out = insts.length;
          patch(split, n.greedy ? { op: "split", x: split + 1, y: out } : { op: "split", x: out, y: split + 1 });
          for (const p of progress) patch(p, { op: "progress", slot, exit: out });
          return;
        }
        // (body (body (…)?)?)? for the optional copies
        const splits: number[] = [];
        for (let k = n.min; k < n.max; k++) {
          splits.push(emit({ op: "jmp", to: -1 }));
          iteration();
        }
        const out = insts.length;
        for (const s of splits) patch(s, n.greedy ? { op: "split", x: s + 1, y: out } : { op: "split", x: out, y: s + 1 });
        for (const p of progress) patch(p, { op: "progress", slot, exit: out });
        return;
      }
    }
  };

  emit({ op: "save", slot: 0 });
  gen(parsed.root);
  emit({ op: "save", slot: 1 });
  emit({ op: "match" });
  return { insts, slots, groupSlots: 2 * (parsed.groupCount + 1), nullableLoops: slots - 2 * (parsed.groupCount + 1) };
}

/** Thread lists: program counters in priority order, each with its capture slots. */
class ThreadList {
  readonly pcs: Int32Array;
  readonly caps: (Int32Array | null)[];
  size = 0;
  constructor(n: number) {
    this.pcs = new Int32Array(n);
    this.caps = new Array<Int32Array | null>(n).fill(null);
  }
}

/**
 * Matches `prog` at the start of `text` (Python's re.match). Returns the capture slots (UTF-16 offsets, -1 for a
 * group that did not take part) or null. `captures: false` skips copying slots when only a yes/no is wanted.
 */
export function run(prog: Program, text: string, captures = true): Int32Array | null {
  const { insts, slots } = prog;
  const n = insts.length;
  const sc = (prog.scratch ??= {
    clist: new ThreadList(n),
    nlist: new ThreadList(n),
    seen: new Uint32Array(n),
    generation: 0,
    stackPc: new Int32Array(n * 2 + 2),
    stackCaps: new Array<Int32Array | null>(n * 2 + 2).fill(null),
  });
  let { clist, nlist } = sc;
  // Generation stamps (sc.seen): a pc is added at most once per text position; start over before they wrap.
  if (sc.generation > 0xf0000000) {
    sc.seen.fill(0);
    sc.generation = 0;
  }
  clist.size = 0;
  nlist.size = 0;
  const len = text.length;
  const step: Step = { insts, sc, text, captures };

  let matched: Int32Array | null = null;
  sc.generation++;
  add(step, clist, 0, captures ? new Int32Array(slots).fill(-1) : null, 0);
  let pos = 0;
  while (clist.size > 0) {
    const cp = pos < len ? text.codePointAt(pos)! : -1;
    const next = pos + (cp > 0xffff ? 2 : 1);
    sc.generation++;
    nlist.size = 0;
    for (let k = 0; k < clist.size; k++) {
      const inst = insts[clist.pcs[k]!]!;
      if (inst.op === "match") {
        matched = clist.caps[k] ?? new Int32Array(0);
        break; // lower-priority threads can no longer win
      }
      if (inst.op === "char" && cp >= 0 && inst.set.has(cp)) add(step, nlist, clist.pcs[k]! + 1, clist.caps[k]!, next);
    }
    for (let k = 0; k < clist.size; k++) clist.caps[k] = null;
    if (cp < 0) break;
    const t = clist;
    clist = nlist;
    nlist = t;
    pos = next;
  }
  for (let k = 0; k < clist.size; k++) clist.caps[k] = null;
  return matched && matched.length > prog.groupSlots ? matched.slice(0, prog.groupSlots) : matched;
}

/**
 * What `add` and `assertHolds` read of one run. They are module functions, not closures in `run`: tsx compiles
 * with esbuild's keepNames, which wraps every named closure in a property definition each time it is made, and
 * `run` runs for every log line.
 */
interface Step {
  insts: Program["insts"];
  sc: Scratch;
  text: string;
  captures: boolean;
}

function assertHolds(kind: AssertKind, text: string, pos: number): boolean {
  const len = text.length;
  switch (kind) {
    case "start":
      return pos === 0;
    case "end_text":
      return pos === len;
    case "end_python":
      return pos === len || (pos === len - 1 && text.charCodeAt(pos) === 10);
    case "word_boundary":
    case "not_word_boundary": {
      const before = pos > 0 && isWordCodePoint(codePointBefore(text, pos));
      const after = pos < len && isWordCodePoint(text.codePointAt(pos)!);
      return (before !== after) === (kind === "word_boundary");
    }
  }
}

/** Adds pc and everything reachable through non-consuming instructions, depth-first in priority order. */
function add(step: Step, list: ThreadList, pc0: number, caps0: Int32Array | null, pos: number): void {
  const { insts, sc, captures } = step;
  const { seen, stackPc, stackCaps, generation } = sc;
  let sp = 0;
  stackPc[sp] = pc0;
  stackCaps[sp++] = caps0;
  while (sp > 0) {
    const pc = stackPc[--sp]!;
    let caps = stackCaps[sp]!;
    stackCaps[sp] = null;
    if (seen[pc] === generation) continue;
    seen[pc] = generation;
    const inst = insts[pc]!;
    switch (inst.op) {
      case "jmp":
        stackPc[sp] = inst.to;
        stackCaps[sp++] = caps;
        break;
      case "split":
        stackPc[sp] = inst.y;
        stackCaps[sp++] = caps;
        stackPc[sp] = inst.x;
        stackCaps[sp++] = caps;
        break;
      case "save":
        if (captures && caps) {
          caps = caps.slice();
          caps[inst.slot] = pos;
        }
        stackPc[sp] = pc + 1;
        stackCaps[sp++] = caps;
        break;
      case "progress":
        // Without captures (test) positions are not tracked; the loop exit is reachable through the split anyway.
        stackPc[sp] = caps && caps[inst.slot] === pos ? inst.exit : pc + 1;
        stackCaps[sp++] = caps;
        break;
      case "assert":
        if (assertHolds(inst.kind, step.text, pos)) {
          stackPc[sp] = pc + 1;
          stackCaps[sp++] = caps;
        }
        break;
      default:
        list.pcs[list.size] = pc;
        list.caps[list.size++] = caps;
    }
  }
}

function codePointBefore(text: string, pos: number): number {
  const low = text.charCodeAt(pos - 1);
  if (low >= 0xdc00 && low <= 0xdfff && pos >= 2) {
    const high = text.charCodeAt(pos - 2);
    if (high >= 0xd800 && high <= 0xdbff) return (high - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
  }
  return low;
}
