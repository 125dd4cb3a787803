/** Early validation of values that come from tasks and jobs (a bad value is `failed_precondition`, before any device command). */
import { MAX_REQUEST_BYTES } from "@farm/adb-wire";
import { isKeyCodeText } from "@farm/key-codes";

const PACKAGE = /^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+$/;
const CLASS_PART = "[A-Za-z_$][A-Za-z0-9_$]*";
const CLASS = new RegExp(`^\\.?${CLASS_PART}(\\.${CLASS_PART})*$`);

/** Undefined when valid, else why not. */
export function checkPackage(name: string): string | undefined {
  if (name === "") return "package name is empty";
  if (!PACKAGE.test(name)) return `invalid package name ${JSON.stringify(name)} (expected e.g. com.example.app)`;
  return undefined;
}

/** `pkg/full.class.Name` or `pkg/.Name`. */
export function checkActivity(full: string): string | undefined {
  if (full === "") return "activity is empty";
  const slash = full.indexOf("/");
  if (slash < 0) return `invalid activity ${JSON.stringify(full)} (expected pkg/pkg.Activity)`;
  const pkgErr = checkPackage(full.slice(0, slash));
  if (pkgErr) return `invalid activity ${JSON.stringify(full)}: ${pkgErr}`;
  if (!CLASS.test(full.slice(slash + 1))) return `invalid activity ${JSON.stringify(full)}: bad class name`;
  return undefined;
}

/** Android permission names and settings keys: dotted identifiers. */
export function checkIdentifier(what: string, v: string): string | undefined {
  if (v === "") return `${what} is empty`;
  if (!/^[A-Za-z0-9_.:-]+$/.test(v)) return `invalid ${what} ${JSON.stringify(v)}`;
  return undefined;
}

/** A device path for push/pull: absolute, no NUL or newline. */
export function checkDevicePath(p: string): string | undefined {
  if (p === "") return "device path is empty";
  if (!p.startsWith("/")) return `device path ${JSON.stringify(p)} must be absolute`;
  if (/[\0\n]/.test(p)) return `device path ${JSON.stringify(p)} contains a NUL or newline`;
  return undefined;
}

/** `pkg/.Receiver` style component for broadcasts (same shape as an activity). */
export const checkComponent = checkActivity;

/** Expands `pkg/.Name` to `pkg/pkg.Name`. */
export function expandActivity(full: string): string {
  const slash = full.indexOf("/");
  if (slash < 0) return full;
  const pkg = full.slice(0, slash);
  const cls = full.slice(slash + 1);
  return cls.startsWith(".") ? `${pkg}/${pkg}${cls}` : full;
}

/**
 * The adb wire format: a host request is a 4-hex-digit length and the text (`shell:<command line>`), so one shell
 * request carries at most 65535 bytes; older devices (maxdata 4096) take even less in one packet.
 */
export const ADB_REQUEST_MAX_BYTES = MAX_REQUEST_BYTES;
/** `input_text` is typed in chunks of at most this many UTF-8 bytes (quoted), which fit any device's maxdata. */
export const INPUT_TEXT_CHUNK_BYTES = 1024;
/** Longest `input_text` accepted (characters); the task loader bounds text fields the same way. */
export const INPUT_TEXT_MAX_CHARS = 16_384;

const CONTROL_OR_BIDI = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** Text `input text` can type: printable characters only (a newline is a key: press_button ENTER). */
export function checkInputText(text: string): string | undefined {
  if (text === "") return "input_text: text is empty";
  if (text.length > INPUT_TEXT_MAX_CHARS) return `input_text: text of ${text.length} characters is longer than the ${INPUT_TEXT_MAX_CHARS} allowed`;
  const m = CONTROL_OR_BIDI.exec(text);
  if (m) {
    const code = m[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0");
    return `input_text: text contains the control character U+${code} at position ${m.index}; input text types printable characters only (send ENTER or BACK with press_button)`;
  }
  return undefined;
}

/** Why a shell command line cannot be sent as one adb request, or undefined. */
export function checkShellRequest(commandLine: string, suffixBytes = 0): string | undefined {
  if (commandLine.includes("\u0000")) return "the command line contains a NUL character, which the adb wire format cannot carry";
  const bytes = Buffer.byteLength(`shell:${commandLine}`, "utf8") + suffixBytes;
  if (bytes > ADB_REQUEST_MAX_BYTES) return `the command line is ${bytes} bytes; one adb request carries at most ${ADB_REQUEST_MAX_BYTES} (its length is 4 hex digits)`;
  return undefined;
}

/** The most keys one `keyEvents` command carries (a field cleared by END + DELs: its text's length, bounded). */
export const MAX_KEYS_PER_COMMAND = 512;

/** Why `keycodes` cannot go as one `input keyevent` command, or undefined. */
export function keyEventsProblem(keycodes: readonly string[]): string | undefined {
  if (keycodes.length === 0) return "keyEvents: no keys";
  if (keycodes.length > MAX_KEYS_PER_COMMAND) return `keyEvents: ${keycodes.length} keys, more than the ${MAX_KEYS_PER_COMMAND} one command carries`;
  const bad = keycodes.find((k) => !isKeyCodeText(k));
  return bad === undefined ? undefined : `keyEvents: invalid keycode ${JSON.stringify(bad.slice(0, 40))} (expected KEYCODE_… or a number)`;
}
