/**
 * @module @farm/shell-words
 * POSIX shell quoting and word splitting, and the one ShellSyntaxError.
 *
 *   shQuote("it's") === "'it'\\''s'"; shJoin(["echo", "a b"]) === "echo 'a b'"; shSplit(`a "b c"`) → ["a", "b c"]
 */
export { shQuote, shJoin, shSplit, ShellSyntaxError } from "./shell-words.ts";
