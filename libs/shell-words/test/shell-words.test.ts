import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { isFarmError } from "@farm/errors";
import { shJoin, shQuote, shSplit, ShellSyntaxError } from "@farm/shell-words";

const HOSTILE = ["plain", "", "a b", "it's", "$(id)", "`id`", "; rm -rf /", "\"q\"", "back\\slash", "tab\there", "new\nline", "*", "ünï"];

test("the real sh reads each quoted value back as exactly one argument", () => {
  const out = execFileSync("/bin/sh", ["-c", `printf '%s\\0' ${shJoin(HOSTILE)}`]).toString();
  assert.deepEqual(out.split("\0").slice(0, -1), HOSTILE);
});

test("shSplit undoes shJoin, and removes quotes as sh does without expanding", () => {
  assert.deepEqual(shSplit(shJoin(HOSTILE.filter((v) => v !== ""))), HOSTILE.filter((v) => v !== ""));
  assert.deepEqual(shSplit(`'"RL_TASK_ENABLED"' a"b c"d \\$x $(id)`), ['"RL_TASK_ENABLED"', "ab cd", "$x", "$(id)"]);
  assert.equal(shQuote("safe/word=1"), "safe/word=1");
});

test("an unterminated quote is a ShellSyntaxError (a FarmError, not retryable) naming the text", () => {
  for (const text of ["a 'b", 'a "b']) {
    assert.throws(() => shSplit(text), (e: unknown) => e instanceof ShellSyntaxError && isFarmError(e) && e.code === "shell_syntax" && !e.retryable && e.message.includes(JSON.stringify(text)));
  }
});
