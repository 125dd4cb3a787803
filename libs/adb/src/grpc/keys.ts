/**
 * Android key codes (`KEYCODE_BACK` or its number, as tasks and policies write them) to the W3C `key` names
 * the emulator's gRPC `KeyboardEvent` understands; both tables live in @farm/key-codes.
 */
import { isKeyCodeText, keyCodeOf, w3cKeyOf } from "@farm/key-codes";

/** The `key` for an Android key code, or undefined when gRPC cannot name it (the caller uses adb). */
export function grpcKeyOf(keycode: string): string | undefined {
  if (!isKeyCodeText(keycode)) return undefined;
  const code = keyCodeOf(keycode);
  return code === undefined ? undefined : w3cKeyOf(code);
}
