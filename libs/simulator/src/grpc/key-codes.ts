/**
 * gRPC KeyboardEvent → Android key code, as the emulator translates host keys: `codeType` XKB (X11
 * keysyms, what AndroidEnv sends on Linux), Evdev (Linux input codes) or Usb (HID usages) with `keyCode`, or a W3C
 * `key` name ("Enter", "ArrowLeft", "GoBack", …). Android key codes: android.view.KeyEvent.
 */
import { KeyCodeType, type KeyboardEventMsg } from "@farm/emulator-grpc";
import { KEYCODE as A, keyCodeOfW3c as letterOrDigit } from "@farm/key-codes";

/** X11 keysyms of the keys a launcher/agent uses (Latin letters/digits are handled by range). */
const XKB = new Map<number, number>([
  [0xff0d, A.ENTER], [0xff8d, A.ENTER], [0xff08, A.DEL], [0xffff, A.FORWARD_DEL], [0xff09, A.TAB], [0xff1b, A.ESCAPE],
  [0xff51, A.DPAD_LEFT], [0xff52, A.DPAD_UP], [0xff53, A.DPAD_RIGHT], [0xff54, A.DPAD_DOWN],
  [0xff50, A.MOVE_HOME], [0xff57, A.MOVE_END], [0x20, A.SPACE], [0xff67, A.MENU],
  [0x1008ff26, A.BACK], [0x1008ff18, A.HOME], [0x1008ff13, A.VOLUME_UP], [0x1008ff11, A.VOLUME_DOWN], [0x1008ff2a, A.POWER],
]);

/** Linux evdev codes (linux/input-event-codes.h). */
const EVDEV = new Map<number, number>([
  [28, A.ENTER], [96, A.ENTER], [14, A.DEL], [111, A.FORWARD_DEL], [15, A.TAB], [1, A.ESCAPE], [57, A.SPACE],
  [103, A.DPAD_UP], [108, A.DPAD_DOWN], [105, A.DPAD_LEFT], [106, A.DPAD_RIGHT], [102, A.MOVE_HOME], [107, A.MOVE_END],
  [158, A.BACK], [172, A.HOME], [139, A.MENU], [580, A.APP_SWITCH], [115, A.VOLUME_UP], [114, A.VOLUME_DOWN], [116, A.POWER],
  [353, A.DPAD_CENTER],
]);
/** evdev KEY_A… by row: q w e r t y u i o p / a s d f g h j k l / z x c v b n m */
const EVDEV_LETTERS: [number, string][] = [[16, "qwertyuiop"], [30, "asdfghjkl"], [44, "zxcvbnm"]];

/** USB HID usages (keyboard page 7), as the emulator's `Usb` codes carry them (0x07XXXX; the bare usage is accepted too). */
const USB = new Map<number, number>([
  [0x28, A.ENTER], [0x58, A.ENTER], [0x29, A.ESCAPE], [0x2a, A.DEL], [0x4c, A.FORWARD_DEL], [0x2b, A.TAB], [0x2c, A.SPACE],
  [0x4f, A.DPAD_RIGHT], [0x50, A.DPAD_LEFT], [0x51, A.DPAD_DOWN], [0x52, A.DPAD_UP], [0x4a, A.MOVE_HOME], [0x4d, A.MOVE_END],
  [0x65, A.MENU], [0x80, A.VOLUME_UP], [0x81, A.VOLUME_DOWN],
]);

/** The Android key code of an event, or undefined when it names no key we know (then it is ignored, as the emulator drops unknown keys). */
export function androidKeyCode(ev: KeyboardEventMsg): number | undefined {
  if (ev.key) return letterOrDigit(ev.key); // a W3C name, or a letter or digit
  const code = ev.keyCode;
  if (ev.codeType === KeyCodeType.XKB) {
    const k = XKB.get(code);
    if (k !== undefined) return k;
    return code >= 0x20 && code < 0x7f ? letterOrDigit(String.fromCharCode(code)) : undefined;
  }
  if (ev.codeType === KeyCodeType.Usb) {
    const usage = code >> 16 === 7 ? code & 0xffff : code;
    const k = USB.get(usage);
    if (k !== undefined) return k;
    if (usage >= 0x04 && usage <= 0x1d) return 29 + usage - 0x04; // a..z
    if (usage >= 0x1e && usage <= 0x27) return 7 + ((usage - 0x1e + 1) % 10); // 1..9, 0
    return undefined;
  }
  if (ev.codeType === KeyCodeType.Evdev) {
    const k = EVDEV.get(code);
    if (k !== undefined) return k;
    for (const [first, row] of EVDEV_LETTERS) if (code >= first && code < first + row.length) return letterOrDigit(row[code - first]!);
    if (code >= 2 && code <= 11) return letterOrDigit(String((code - 1) % 10)); // KEY_1 = 2 … KEY_0 = 11
    return undefined;
  }
  return undefined;
}
