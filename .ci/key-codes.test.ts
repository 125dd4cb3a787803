/**
 * One key-code table: Android's KeyEvent numbers and the emulator's W3C key names are written once, in
 * @farm/key-codes, and the driver and the simulator both read them there. A second table (`BACK: 4`,
 * `KEYCODE_BACK = 4`, `"4": "BACK"`, `["GoBack", 4]`) anywhere else can drift from it. Every table of Android keys
 * holds BACK, so the rule looks for BACK's number written beside its name. Tests may write numbers on purpose.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { patternSites, withTree } from "./source-files.ts";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** BACK (or GoBack) next to 4, as an object entry, a constant, a reverse entry or a map pair. */
const KEY_TABLE = /\b(?:KEYCODE_)?BACK["']?\s*[:=]\s*4\b|["']4["']\s*:\s*["'](?:KEYCODE_)?BACK["']|\[\s*["']GoBack["']\s*,\s*4\s*\]/g;

/** `file:line` of every key-code table outside libs/key-codes. */
export function keyCodeTables(root: string): string[] {
  return patternSites(root, KEY_TABLE, (rel) => rel.startsWith("libs/key-codes/"));
}

test("no key-code table outside @farm/key-codes", () => {
  assert.deepEqual(keyCodeTables(REPO), [], "use KEYCODE, keyCodeOf, w3cKeyOf or keyCodeOfW3c from @farm/key-codes");
});

test("the rule catches each shape of a second table, not a use of the shared one", () => {
  withTree("keycode-rule-", {
    "libs/x/src/a.ts": "const A = {\n  HOME: 3, BACK: 4,\n};\nexport const KEYCODE_BACK = 4;\n",
    "services/y/src/b.ts": "const N = { \"3\": \"HOME\", \"4\": \"BACK\" };\nconst W = new Map([\n  [\"GoBack\", 4]]);\n",
    "libs/x/src/ok.ts": "export const KEYCODE_BACK = KEYCODE.BACK;\nif (keycode === KEYCODE_BACK) back(4);\n",
    "libs/key-codes/src/index.ts": "export const KEYCODE = { BACK: 4 };\n",
  }, (root) => {
    assert.deepEqual(keyCodeTables(root).sort(), ["libs/x/src/a.ts:2", "libs/x/src/a.ts:4", "services/y/src/b.ts:1", "services/y/src/b.ts:3"]);
  });
});
