/**
 * Credentials masked out of text for logs and error messages: a Redis URL's password, and any text's URL user
 * info, bearer tokens and secret query values. No imports: a command can mask its error messages without loading
 * Redis clients (`@farm/queue/credentials`).
 */
/** `user:password` (or a bare token) of a URL's user info, masked: `user:***` / `***`. */
function maskUserInfo(userInfo: string): string {
  const colon = userInfo.indexOf(":");
  return colon >= 0 ? `${userInfo.slice(0, Math.min(colon, 64))}:***` : "***";
}

/**
 * `url` with the password replaced by `***`, for logs and error messages. The user info runs to the
 * LAST `@` (a password may contain `@`, `/`, `%40`, `:`), so no part of it is ever printed.
 */
export function redactRedisUrl(url: string): string {
  const m = /^([a-z][a-z0-9+.-]*:\/\/)/i.exec(url);
  if (!m) return url;
  const rest = url.slice(m[1]!.length);
  const at = rest.lastIndexOf("@");
  if (at < 0) return url;
  return `${m[1]}${maskUserInfo(rest.slice(0, at))}@${rest.slice(at + 1)}`;
}

/**
 * Any text with credentials masked: user info of every `scheme://user:pass@` URL (to the last `@` of
 * the URL), `Bearer <token>`, and `token=` / `password=` / `secret=` / `key=` query or form values.
 */
export function redactCredentials(text: string): string {
  return text
    // `"` ends the match so JSON stays JSON (raw `"` cannot appear in a URL's user info anyway).
    .replace(/([a-z][a-z0-9+.-]*:\/\/)([^\s"<>]*)@/gi, (_m, scheme: string, info: string) => `${scheme}${maskUserInfo(info)}@`)
    .replace(/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g, "$1 ***")
    .replace(/([?&;\s](?:access_token|token|password|passwd|secret|api_key|apikey|key)=)[^&\s"']+/gi, "$1***");
}

