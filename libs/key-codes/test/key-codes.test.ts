import { test } from "node:test";
import assert from "node:assert/strict";
import { isKeyCodeText, KEYCODE, keyCodeOf, keyCodeOfW3c, keyNameOf, w3cKeyOf } from "@farm/key-codes";

test("android.view.KeyEvent numbers of the keys the farm uses", () => {
  assert.equal(KEYCODE.HOME, 3);
  assert.equal(KEYCODE.BACK, 4);
  assert.equal(KEYCODE.ENTER, 66);
  assert.equal(KEYCODE.DEL, 67);
  assert.equal(KEYCODE.APP_SWITCH, 187);
  assert.equal(keyCodeOf("KEYCODE_0"), 7);
  assert.equal(keyCodeOf("KEYCODE_9"), 16);
  assert.equal(keyCodeOf("KEYCODE_A"), 29);
  assert.equal(keyCodeOf("KEYCODE_Z"), 54);
});

test("keyCodeOf takes a number, a name with or without prefix, any case; unknown is undefined", () => {
  assert.equal(keyCodeOf("4"), 4);
  assert.equal(keyCodeOf("7"), 7, "a number is the code itself, as `input keyevent 7` means KEYCODE_0");
  assert.equal(keyCodeOf("KEYCODE_BACK"), 4);
  assert.equal(keyCodeOf("back"), 4);
  assert.equal(keyCodeOf("KEYCODE_NOPE"), undefined);
  assert.equal(keyCodeOf("__proto__"), undefined);
  assert.equal(keyCodeOf("constructor"), undefined);
  assert.equal(keyCodeOf(""), undefined);
});

test("keyNameOf is the inverse for every named key, letter and digit", () => {
  for (const [name, code] of Object.entries(KEYCODE)) assert.equal(keyNameOf(code), name);
  assert.equal(keyNameOf(29), "A");
  assert.equal(keyNameOf(7), "0");
  assert.equal(keyNameOf(9999), undefined);
});

test("W3C key names both ways, letters and digits as their character", () => {
  assert.equal(w3cKeyOf(KEYCODE.BACK), "GoBack");
  assert.equal(w3cKeyOf(KEYCODE.DEL), "Backspace");
  assert.equal(w3cKeyOf(KEYCODE.SPACE), " ");
  assert.equal(w3cKeyOf(29), "a");
  assert.equal(w3cKeyOf(7), "0");
  assert.equal(w3cKeyOf(KEYCODE.CALL), undefined);
  for (const code of [3, 4, 19, 20, 21, 22, 24, 25, 26, 61, 62, 66, 67, 82, 111, 112, 122, 123, 187, 7, 16, 29, 54]) {
    assert.equal(keyCodeOfW3c(w3cKeyOf(code)!), code, String(code));
  }
  assert.equal(keyCodeOfW3c("A"), 29);
  assert.equal(keyCodeOfW3c("Unidentified"), undefined);
  assert.equal(keyCodeOfW3c("hasOwnProperty"), undefined);
});

test("isKeyCodeText: KEYCODE_ and an upper-case name, or up to 4 digits; nothing a shell could act on", () => {
  for (const ok of ["KEYCODE_BACK", "KEYCODE_A", "KEYCODE_0", "4", "1234"]) assert.equal(isKeyCodeText(ok), true, ok);
  for (const bad of ["BACK", "keycode_back", "KEYCODE_BACK; reboot", "12345", "", "4 ", "KEYCODE_"]) assert.equal(isKeyCodeText(bad), false, bad);
});
