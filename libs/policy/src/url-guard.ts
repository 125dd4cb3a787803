/**
 * Which hosts a remote (HTTP) policy may reach. A job names its policy URL, so without a guard anyone who
 * can enqueue a job could make a worker POST to any address it can reach — cloud metadata endpoints
 * included — and read the answer back through the job's failure reason.
 *
 * Allow-list entries (FARM_POLICY_ALLOWED_HOSTS, comma-separated, or the `allowedHosts` option): the syntax and
 * rules of @farm/outbound-http (exact names, `*.suffix`, addresses, CIDR ranges, `*`; loopback always; link-local
 * and cloud metadata addresses and names only when named exactly; every resolved address checked when connecting).
 */
import { FarmError } from "@farm/errors";
import { hostGuard, type HostGuard } from "@farm/outbound-http";

export { normalizeHost, redactUrl } from "@farm/outbound-http";

export const POLICY_ALLOWED_HOSTS_ENV = "FARM_POLICY_ALLOWED_HOSTS";

export class UrlNotAllowedError extends FarmError<"url_not_allowed"> {
  override readonly name = "UrlNotAllowedError";
  /** the same input fails the same way (not retryable). */
  constructor(message: string) {
    super("url_not_allowed", message);
  }
}

/** The remote policy's guard: `checkHost` and `checkAddress` throw UrlNotAllowedError; `lookup` for http.request. */
export type HostAllowList = HostGuard;

/** Parses the operator's entries (throws RangeError naming a bad one). */
export function hostAllowList(entries: readonly string[] = []): HostAllowList {
  return hostGuard(entries, {
    refused: (message) => new UrlNotAllowedError(message),
    badEntry: (message) => new RangeError(`item ${message}`),
    notListed: "is not in the remote policy allow-list",
    addHint: POLICY_ALLOWED_HOSTS_ENV,
  });
}
