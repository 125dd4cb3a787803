import { test } from "node:test";
import assert from "node:assert/strict";
import { blankUnsafe, isTerminalUnsafe, terminalSafe, terminalSafeJson } from "@farm/terminal-text";

const UNSAFE = ["\u0000", "\u0007", "\t", "\n", "\r", "\u001b", "\u001f", "\u007f", "\u0085", "\u009b", "\u009f", "\u061c", "\u200e", "\u200f", "\u202a", "\u202e", "\u2066", "\u2069", "\u2028", "\u2029"];
const SAFE = [" ", "a", "~", "\u00a0", "é", "\u200b", "\u200d", "\u2060", "\ufeff", "\u2070", "\u202f", "\u061b", "😀"];

test("the one set: C0, DEL, C1, bidi controls, line and paragraph separators", () => {
  for (const c of UNSAFE) assert.equal(isTerminalUnsafe(c), true, `U+${c.charCodeAt(0).toString(16)}`);
  for (const c of SAFE) assert.equal(isTerminalUnsafe(c), false, `U+${c.charCodeAt(0).toString(16)}`);
});

test("terminalSafe writes each unsafe character out and leaves no raw one", () => {
  assert.equal(terminalSafe("a\u001b]0;pwned\u0007b"), "a\\x1b]0;pwned\\x07b");
  assert.equal(terminalSafe("evil\u202eexe.txt\u0085\u2028"), "evil\\u202eexe.txt\\x85\\u2028");
  assert.equal(terminalSafe("plain, é and 😀"), "plain, é and 😀");
  const all = UNSAFE.join("");
  assert.ok(![...terminalSafe(all)].some(isTerminalUnsafe));
});

test("terminalSafeJson keeps the JSON and its layout, escapes the rest", () => {
  const value = { id: "evil\u001b[2J\u202e", note: "a\u0085b\u2028c" };
  const json = JSON.stringify(value, null, 2);
  const safe = terminalSafeJson(json);
  assert.deepEqual(JSON.parse(safe), value);
  assert.ok(safe.includes("\n  \"id\""), "newlines and indentation between tokens stay");
  assert.ok(![...safe].some((c) => isTerminalUnsafe(c) && c !== "\n"));
  assert.ok(safe.includes("\\u202e") && safe.includes("\\u0085") && safe.includes("\\u2028"));
});

test("blankUnsafe turns each run into one space", () => {
  assert.equal(blankUnsafe("a\u001b\u001b[31mb\u202e\u2066c"), "a [31mb c");
  assert.equal(blankUnsafe("line1\r\nline2"), "line1 line2");
});
