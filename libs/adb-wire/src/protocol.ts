/**
 * The adb server's host protocol, as bytes: a request is its length in 4 hex digits and its text; the server
 * answers `OKAY`, or `FAIL` + 4 hex digits + a message; queries then send their answer as 4 hex digits + text.
 * Pure functions over buffers, so every connection in the farm parses the same way.
 */
import { AdbWireError } from "./errors.ts";

/** The most a 4-hex-digit length can say. */
export const MAX_REQUEST_BYTES = 0xffff;

/** `text` framed as a request; refuses (AdbWireError `request_too_long`) what the length cannot carry. */
export function encodeRequest(text: string): Buffer {
  const body = Buffer.from(text, "utf8");
  if (body.length > MAX_REQUEST_BYTES) throw new AdbWireError("request_too_long", `adb request of ${body.length} bytes is over the protocol's ${MAX_REQUEST_BYTES} (starts ${JSON.stringify(text.slice(0, 40))}); send less per request`);
  return Buffer.concat([Buffer.from(body.length.toString(16).padStart(4, "0"), "latin1"), body]);
}

export type Status = { ok: true; rest: Buffer } | { ok: false; message: string };

/** The server's status at the start of `pending` (and what follows it), or undefined while incomplete. */
export function takeStatus(pending: Buffer): Status | undefined {
  if (pending.length < 4) return undefined;
  const tag = pending.toString("latin1", 0, 4);
  if (tag === "OKAY") return { ok: true, rest: pending.subarray(4) };
  if (tag !== "FAIL") return { ok: false, message: `unexpected reply ${JSON.stringify(tag)}` };
  const msg = takeLengthPrefixed(pending.subarray(4));
  if (msg === undefined) return undefined;
  if ("error" in msg) return { ok: false, message: `malformed FAIL length ${msg.error}` };
  return { ok: false, message: msg.text };
}

/** A 4-hex-digit length and that many bytes (UTF-8) at the start of `pending`, or undefined while incomplete. */
export function takeLengthPrefixed(pending: Buffer): { text: string; rest: Buffer } | { error: string } | undefined {
  if (pending.length < 4) return undefined;
  const hex = pending.toString("latin1", 0, 4);
  if (!/^[0-9a-fA-F]{4}$/.test(hex)) return { error: JSON.stringify(hex) };
  const len = parseInt(hex, 16);
  if (pending.length < 4 + len) return undefined;
  return { text: pending.toString("utf8", 4, 4 + len), rest: pending.subarray(4 + len) };
}

/** `host:devices` / `host:track-devices` text (`serial\tstate` lines) as serial → state. */
export function parseDeviceList(text: string): Map<string, string> {
  const devices = new Map<string, string>();
  for (const line of text.split("\n")) {
    const [serial, state] = line.split("\t");
    if (serial && state) devices.set(serial, state.trim());
  }
  return devices;
}
