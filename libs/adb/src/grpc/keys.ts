/**
 * Android key codes (`KEYCODE_BACK` or its number, as tasks and policies write them) to the W3C `key` names
 * the emulator's gRPC `KeyboardEvent` understands. Letters and digits are their own character.
 */

const NAMED: Record<string, string> = {
  HOME: "GoHome", BACK: "GoBack", DPAD_UP: "ArrowUp", DPAD_DOWN: "ArrowDown", DPAD_LEFT: "ArrowLeft", DPAD_RIGHT: "ArrowRight",
  TAB: "Tab", SPACE: " ", ENTER: "Enter", DEL: "Backspace", ESCAPE: "Escape", FORWARD_DEL: "Delete", MOVE_HOME: "Home",
  MOVE_END: "End", APP_SWITCH: "AppSwitch", MENU: "ContextMenu", POWER: "Power", VOLUME_UP: "AudioVolumeUp", VOLUME_DOWN: "AudioVolumeDown",
};

/** android.view.KeyEvent numbers of the named keys. */
const NUMBERS: Record<string, string> = {
  "3": "HOME", "4": "BACK", "19": "DPAD_UP", "20": "DPAD_DOWN", "21": "DPAD_LEFT", "22": "DPAD_RIGHT", "61": "TAB", "62": "SPACE",
  "66": "ENTER", "67": "DEL", "111": "ESCAPE", "112": "FORWARD_DEL", "122": "MOVE_HOME", "123": "MOVE_END", "187": "APP_SWITCH",
  "82": "MENU", "26": "POWER", "24": "VOLUME_UP", "25": "VOLUME_DOWN",
};

/** The `key` for an Android key code, or undefined when gRPC cannot name it (the caller uses adb). */
export function grpcKeyOf(keycode: string): string | undefined {
  let name = keycode.startsWith("KEYCODE_") ? keycode.slice(8) : undefined;
  if (name === undefined && /^\d{1,4}$/.test(keycode)) {
    const n = Number(keycode);
    if (n >= 7 && n <= 16) return String(n - 7); // KEYCODE_0…9
    if (n >= 29 && n <= 54) return String.fromCharCode(97 + n - 29); // KEYCODE_A…Z
    name = Object.hasOwn(NUMBERS, keycode) ? NUMBERS[keycode] : undefined;
  }
  if (name === undefined) return undefined;
  if (/^[0-9]$/.test(name)) return name;
  if (/^[A-Z]$/.test(name)) return name.toLowerCase();
  return Object.hasOwn(NAMED, name) ? NAMED[name] : undefined;
}
