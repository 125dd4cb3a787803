/**
 * Which task servers the farm may call. A family file names its task server URL, so without a guard whoever writes
 * task files could make workers POST episode data to any address they reach (cloud metadata endpoints included).
 * The rules are @farm/outbound-http's (the remote policy's guard is the same): loopback always, other hosts only when
 * the worker's config lists them (`allowedHosts`), link-local and cloud metadata only when named exactly, every
 * resolved address checked again when connecting.
 */
import { hostGuard, type HostGuard } from "@farm/outbound-http";
import { TaskProtocolError } from "./errors.ts";

export { redactUrl } from "@farm/outbound-http";

export type TaskServerHostGuard = Pick<HostGuard, "checkHost" | "lookup">;

/** Parses the allow-list (throws TaskProtocolError(bad_ref) naming a bad entry); refusals are TaskProtocolError(url_not_allowed). `where` prefixes messages. */
export function taskServerHostGuard(entries: readonly string[], where: string): TaskServerHostGuard {
  return hostGuard(entries, {
    refused: (message) => new TaskProtocolError("url_not_allowed", message),
    badEntry: (message) => new TaskProtocolError("bad_ref", `${where}: allowed host ${message}`),
    notListed: "is not on the task server allow-list",
    addHint: "the worker's task server allow-list",
    where,
  });
}
