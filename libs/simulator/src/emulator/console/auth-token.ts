/**
 * The console auth token, kept as the emulator keeps it: `~/.emulator_console_auth_token`, created
 * (O_EXCL, 0600) with 12 random bytes in base64 when missing, read and trimmed otherwise. An empty
 * file turns authentication off. Read on every connection and every `auth`, so edits apply at once.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export const AUTH_TOKEN_FILE = ".emulator_console_auth_token";

export function defaultAuthTokenPath(): string {
  return path.join(os.homedir(), AUTH_TOKEN_FILE);
}

/** The token ("" = auth disabled); undefined when the file can be neither read nor created. */
export function loadOrCreateToken(file: string): string | undefined {
  try {
    const fd = fs.openSync(file, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY, 0o600);
    const token = crypto.randomBytes(12).toString("base64");
    try {
      fs.writeSync(fd, token);
    } finally {
      fs.closeSync(fd);
    }
    return token;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") return undefined;
  }
  try {
    // The token is 16 characters; a huge file is not a token, so read a bounded prefix.
    const fd = fs.openSync(file, "r");
    try {
      const buf = Buffer.alloc(4096);
      const n = fs.readSync(fd, buf, 0, buf.length, 0);
      return buf.subarray(0, n).toString("utf8").trim();
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return undefined;
  }
}

/** Constant-time comparison, so the reply time does not tell how much of a guess was right. */
export function tokenMatches(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}
