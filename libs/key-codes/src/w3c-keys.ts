/**
 * The W3C `KeyboardEvent.key` names the emulator's gRPC `KeyboardEvent.key` understands, for the Android keys
 * that have one. Letters and digits are their own character (lowercase letters).
 */
import { codeOfName, KEYCODE, keyNameOf } from "./key-codes.ts";

const W3C = new Map<string, number>([
  ["Enter", KEYCODE.ENTER], ["Backspace", KEYCODE.DEL], ["Delete", KEYCODE.FORWARD_DEL], ["Tab", KEYCODE.TAB], ["Escape", KEYCODE.ESCAPE],
  ["ArrowUp", KEYCODE.DPAD_UP], ["ArrowDown", KEYCODE.DPAD_DOWN], ["ArrowLeft", KEYCODE.DPAD_LEFT], ["ArrowRight", KEYCODE.DPAD_RIGHT],
  ["Home", KEYCODE.MOVE_HOME], ["End", KEYCODE.MOVE_END], ["GoBack", KEYCODE.BACK], ["GoHome", KEYCODE.HOME], ["AppSwitch", KEYCODE.APP_SWITCH],
  ["ContextMenu", KEYCODE.MENU], ["Power", KEYCODE.POWER], ["AudioVolumeUp", KEYCODE.VOLUME_UP], ["AudioVolumeDown", KEYCODE.VOLUME_DOWN], [" ", KEYCODE.SPACE],
]);
const BY_CODE = new Map<number, string>([...W3C].map(([key, code]) => [code, key]));

/** The W3C key name of an Android key code, or undefined when the emulator's gRPC cannot name it. */
export function w3cKeyOf(code: number): string | undefined {
  const named = BY_CODE.get(code);
  if (named !== undefined) return named;
  const name = keyNameOf(code);
  return name !== undefined && /^[0-9A-Z]$/.test(name) ? name.toLowerCase() : undefined;
}

/** The Android key code of a W3C key name (or a single letter or digit, either case); undefined when unknown. */
export function keyCodeOfW3c(key: string): number | undefined {
  const named = W3C.get(key);
  if (named !== undefined) return named;
  if (!/^[0-9A-Za-z]$/.test(key)) return undefined;
  return codeOfName(key.toUpperCase());
}
