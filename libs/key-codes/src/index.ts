/**
 * @module @farm/key-codes
 * Android's key codes (android.view.KeyEvent) and the emulator's W3C key names, once, for the driver
 * (`@farm/adb`: `input keyevent`, gRPC key events) and the simulator (the device side of both).
 * `.ci/key-codes.test.ts` fails on a key-code table anywhere else in the sources.
 *
 *   KEYCODE.BACK === 4; keyCodeOf("KEYCODE_BACK") === 4; keyNameOf(4) === "BACK";
 *   w3cKeyOf(4) === "GoBack"; keyCodeOfW3c("GoBack") === 4;
 */
export { KEYCODE, isKeyCodeText, keyCodeOf, keyNameOf, type KeyName } from "./key-codes.ts";
export { w3cKeyOf, keyCodeOfW3c } from "./w3c-keys.ts";
