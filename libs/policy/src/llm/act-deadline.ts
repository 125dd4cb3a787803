/**
 * How long one `act()` of the `llm` policy may take by its own settings: every HTTP try at its full timeout plus the
 * longest backoffs between them. The episode's policy deadline defaults to it (Policy.actDeadlineMs), so a slow model
 * server is waited for as long as the policy itself would wait, and no longer.
 */
import { BACKOFF_BASE_MS } from "./chat-client.ts";
import type { ResolvedLlmOptions } from "./options.ts";

/** Slack for the farm's own work around the requests (prompt, screenshot encoding, answer parsing). */
const OVERHEAD_MS = 2_000;

export function llmActDeadlineMs(o: Pick<ResolvedLlmOptions, "timeoutMs" | "httpRetries" | "maxBackoffMs">): number {
  let backoff = 0;
  // The jitter goes up to +20 % of the doubling, capped by maxBackoffMs (chat-client.ts backoffMs).
  for (let attempt = 0; attempt < o.httpRetries; attempt++) backoff += Math.min(1.2 * BACKOFF_BASE_MS * 2 ** attempt, o.maxBackoffMs);
  return Math.ceil(o.timeoutMs * (o.httpRetries + 1) + backoff + OVERHEAD_MS);
}
