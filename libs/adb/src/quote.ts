/**
 * Building device shell command lines safely (task-format.md §8.1).
 *
 * The device's `sh` re-parses every command line the driver sends. Values that come from a task or a
 * job are therefore single-quoted so each reaches the device as exactly one argument and no shell
 * syntax inside it can act. `extra_args` are special: AndroidEnv joins them with spaces and lets the
 * device shell remove quotes (`'"RL_TASK_ENABLED"'` arrives as `RL_TASK_ENABLED`), so the driver
 * performs that quote removal itself — without expansions or operators — and quotes each word.
 */
import { shJoin, shQuote, shSplit } from "@farm/shell-words";
import { INPUT_TEXT_CHUNK_BYTES } from "./validate.ts";

/**
 * The device-shell form of AndroidEnv `extra_args`: joined with single spaces as upstream does, quote
 * removal as the device shell would do it, then every resulting word single-quoted. Returns the
 * words too (what the app receives).
 */
export function quoteExtraArgs(extraArgs: readonly string[]): { commandLine: string; words: string[] } {
  const words = shSplit(extraArgs.join(" "));
  return { commandLine: shJoin(words), words };
}

/**
 * What Android's `input text` makes of its argument: each `%s` becomes a space (InputShellCommand's sendText),
 * everything else is typed as it is. The one rule the farm applies to typed text on every transport: the shell
 * paths send the text and the device applies it, the gRPC path applies it here (the emulator's KeyboardEvent
 * types `text` literally), so one action types the same text everywhere. A literal `%s` cannot be typed by
 * `input text`, so it is typed nowhere.
 */
export function androidInputText(text: string): string {
  return text.replace(/%s/g, " ");
}

/**
 * `text` cut into the pieces one `input text` each types: the quoted piece at most INPUT_TEXT_CHUNK_BYTES UTF-8
 * bytes (one adb request, and one terminal line, on any device), never cutting a code point or a `%s` pair (cut
 * there, `%` and `s` would be typed as they are instead of as a space). The pieces typed in turn type
 * androidInputText(text), whatever the transport.
 */
export function inputTextPieces(text: string, maxBytes = INPUT_TEXT_CHUNK_BYTES): string[] {
  const pieces: string[] = [];
  let cur = "";
  let curBytes = 2; // the quotes
  const units = text.match(/%s|[\s\S]/gu) ?? [];
  for (const u of units) {
    // Its bytes inside single quotes ('\'' for a quote): shQuote's output is never longer than that sum + 2.
    const b = u === "'" ? 4 : Buffer.byteLength(u, "utf8");
    if (curBytes + b > maxBytes && cur !== "") {
      pieces.push(cur);
      cur = "";
      curBytes = 2;
    }
    cur += u;
    curBytes += b;
  }
  if (cur !== "") pieces.push(cur);
  return pieces;
}

/** The shell line that types one piece (inputTextPieces): the piece as one single-quoted word. */
export function inputTextLine(piece: string): string {
  return `input text ${shQuote(piece)}`;
}
