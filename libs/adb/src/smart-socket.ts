/**
 * The adb server's smart-socket protocol on a plain socket, for the calls made often enough that adbkit's
 * per-call machinery shows in the worker's CPU: a request is its length in 4 hex digits and the text; the
 * server answers `OKAY`, or `FAIL` + 4 hex digits + a message.
 */

export const smartRequest = (text: string): Buffer => Buffer.from(Buffer.byteLength(text, "utf8").toString(16).padStart(4, "0") + text, "utf8");

export type SmartStatus = { ok: true; rest: Buffer } | { ok: false; message: string };

/** The server's status at the start of `pending` (and what follows it), or undefined while incomplete. */
export function takeStatus(pending: Buffer): SmartStatus | undefined {
  if (pending.length < 4) return undefined;
  const tag = pending.toString("latin1", 0, 4);
  if (tag === "OKAY") return { ok: true, rest: pending.subarray(4) };
  if (tag !== "FAIL") return { ok: false, message: `unexpected reply ${JSON.stringify(tag)}` };
  if (pending.length < 8) return undefined;
  const hex = pending.toString("latin1", 4, 8);
  if (!/^[0-9a-fA-F]{4}$/.test(hex)) return { ok: false, message: `malformed FAIL length ${JSON.stringify(hex)}` };
  const len = parseInt(hex, 16);
  if (pending.length < 8 + len) return undefined;
  return { ok: false, message: pending.toString("utf8", 8, 8 + len) };
}
