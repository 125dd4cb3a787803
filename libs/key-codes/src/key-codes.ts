/** The named keys the farm uses, by their android.view.KeyEvent numbers (`KEYCODE_` prefix left off). */
export const KEYCODE = Object.freeze({
  SOFT_LEFT: 1, SOFT_RIGHT: 2, HOME: 3, BACK: 4, CALL: 5, ENDCALL: 6, STAR: 17, POUND: 18,
  DPAD_UP: 19, DPAD_DOWN: 20, DPAD_LEFT: 21, DPAD_RIGHT: 22, DPAD_CENTER: 23, VOLUME_UP: 24, VOLUME_DOWN: 25,
  POWER: 26, CAMERA: 27, CLEAR: 28, COMMA: 55, PERIOD: 56, TAB: 61, SPACE: 62, ENTER: 66, DEL: 67,
  MENU: 82, NOTIFICATION: 83, SEARCH: 84, MEDIA_PLAY_PAUSE: 85, PAGE_UP: 92, PAGE_DOWN: 93, ESCAPE: 111,
  FORWARD_DEL: 112, MOVE_HOME: 122, MOVE_END: 123, VOLUME_MUTE: 164, APP_SWITCH: 187, SLEEP: 223, WAKEUP: 224,
} as const);

export type KeyName = keyof typeof KEYCODE;

/** KEYCODE_0 … KEYCODE_9 are 7 … 16; KEYCODE_A … KEYCODE_Z are 29 … 54. */
const DIGIT_0 = 7;
const LETTER_A = 29;

const BY_NAME = new Map<string, number>(Object.entries(KEYCODE));
for (let d = 0; d <= 9; d++) BY_NAME.set(String(d), DIGIT_0 + d);
for (let c = 0; c < 26; c++) BY_NAME.set(String.fromCharCode(65 + c), LETTER_A + c);
const BY_CODE = new Map<number, string>([...BY_NAME].map(([name, code]) => [code, name]));

/** How tasks, policies and jobs write a key: `KEYCODE_` and an upper-case name, or 1..4 digits. */
export function isKeyCodeText(text: string): boolean {
  return /^(KEYCODE_[A-Z0-9_]+|[0-9]{1,4})$/.test(text);
}

/** The key code of a name without prefix (`BACK`, `A`, `7` is KEYCODE_7), or undefined. */
export function codeOfName(name: string): number | undefined {
  return BY_NAME.get(name);
}

/** A key code from its number or its name (`KEYCODE_BACK`, `BACK`, any case); undefined when unknown. */
export function keyCodeOf(text: string): number | undefined {
  if (/^\d{1,9}$/.test(text)) return Number(text);
  return codeOfName(text.toUpperCase().replace(/^KEYCODE_/, ""));
}

/** The name of a key code without its `KEYCODE_` prefix (`BACK`, `A`, `7`…), or undefined when we have none. */
export function keyNameOf(code: number): string | undefined {
  return BY_CODE.get(code);
}
