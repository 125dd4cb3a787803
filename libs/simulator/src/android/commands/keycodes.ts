/** Android key codes by name (`KEYCODE_BACK` or `BACK`) for `input keyevent`. */
const NAMED: Record<string, number> = {
  SOFT_LEFT: 1, SOFT_RIGHT: 2, HOME: 3, BACK: 4, CALL: 5, ENDCALL: 6, STAR: 17, POUND: 18,
  DPAD_UP: 19, DPAD_DOWN: 20, DPAD_LEFT: 21, DPAD_RIGHT: 22, DPAD_CENTER: 23, VOLUME_UP: 24, VOLUME_DOWN: 25,
  POWER: 26, CAMERA: 27, CLEAR: 28, COMMA: 55, PERIOD: 56, TAB: 61, SPACE: 62, ENTER: 66, DEL: 67,
  MENU: 82, NOTIFICATION: 83, SEARCH: 84, MEDIA_PLAY_PAUSE: 85, PAGE_UP: 92, PAGE_DOWN: 93, ESCAPE: 111,
  FORWARD_DEL: 112, MOVE_HOME: 122, MOVE_END: 123, VOLUME_MUTE: 164, APP_SWITCH: 187, SLEEP: 223, WAKEUP: 224,
};
for (let d = 0; d <= 9; d++) NAMED[String(d)] = 7 + d;
for (let c = 0; c < 26; c++) NAMED[String.fromCharCode(65 + c)] = 29 + c;

/** A key code from a number or a name; undefined when unknown. */
export function parseKeycode(text: string): number | undefined {
  if (/^\d+$/.test(text)) return Number(text);
  const name = text.toUpperCase().replace(/^KEYCODE_/, "");
  return Object.hasOwn(NAMED, name) ? NAMED[name] : undefined;
}
