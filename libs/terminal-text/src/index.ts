/**
 * @module @farm/terminal-text
 * The farm's one definition of text that is unsafe to print: what comes from files, jobs, devices or peers
 * (ids, file names, causes, log lines) may carry an ESC that rewrites the screen or a bidi override that
 * makes a line read differently from what it is. `.ci/terminal-text.test.ts` fails on an escaping regex
 * anywhere else in the sources.
 *
 *   stderr.write(`${terminalSafe(`${file}: ${e.message}`)}\n`);      // `\x1b`, `\u202e` written out
 *   stdout.write(terminalSafeJson(JSON.stringify(value, null, 2)));  // still the same JSON
 *   log.warn({ excerpt: blankUnsafe(body) });                         // runs of them as one space
 */
export { isTerminalUnsafe, terminalSafe, terminalSafeJson, blankUnsafe } from "./terminal-text.ts";
