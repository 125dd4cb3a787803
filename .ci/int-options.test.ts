/**
 * One integer check for settings and options: text becomes an integer through @farm/config's intInRange
 * (SettingsReader.int, `farm` flags, benchmark options), so "1e3", " 1" or "0x10" mean the same everywhere.
 * A signed-integer regex elsewhere is a second checker, unless ALLOWED names the wire format it follows.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { patternSites, withTree } from "./source-files.ts";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** Files whose integer syntax is an outside format's, not an option's: path → why. */
const ALLOWED = new Map<string, string>([
  ["libs/adb/src/a11y/uiautomator-dump.ts", "uiautomator's XML attributes: Android writes -?digits, bounded to Java's int"],
]);

/** A regex literal for whole-text signed integers: `/^-?\d`, `/^[+-]?\d`, `/^[-+]?\d`. */
const SIGNED_INT = /\/\^(?:-|\[\+-\]|\[-\+\])\??\\d/g;

/** `file:line` of every signed-integer regex outside libs/config and the allowed files. */
export function intCheckers(root: string, allowed: ReadonlyMap<string, string> = ALLOWED): string[] {
  return patternSites(root, SIGNED_INT, (rel) => rel.startsWith("libs/config/") || allowed.has(rel));
}

test("no integer-option checker outside @farm/config", () => {
  assert.deepEqual(intCheckers(REPO), [], "check integer text with intInRange (or SettingsReader.int) from @farm/config");
});

test("the rule catches a second checker, not the allowed wire format or an unsigned count", () => {
  withTree("int-rule-", {
    "libs/x/src/a.ts": "// flags\nexport const n = (v: string) => (/^[+-]?\\d{1,16}$/.test(v) ? Number(v) : NaN);\n",
    "loadtest/src/b.ts": "export const m = (v: string) => /^-?\\d+$/.test(v.trim());\n",
    "libs/x/src/wire.ts": "export const w = (v: string) => /^-?\\d{1,10}$/.test(v);\n",
    "libs/x/src/ok.ts": "export const count = (v: string) => /^\\d+$/.test(v);\n",
    "libs/config/src/int-text.ts": "const INT_TEXT = /^[+-]?\\d{1,16}$/;\n",
  }, (root) => {
    assert.deepEqual(intCheckers(root, new Map([["libs/x/src/wire.ts", "a wire format"]])).sort(), ["libs/x/src/a.ts:2", "loadtest/src/b.ts:1"]);
  });
});
