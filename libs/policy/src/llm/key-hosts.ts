/**
 * Where the LLM API key may go. A campaign names its model endpoint; the key (FARM_LLM_API_KEY) is the worker's own.
 * So the key is sent only to hosts the operator listed for it (FARM_LLM_KEY_HOSTS: exact host names or addresses,
 * never `*`, no wildcards, no ranges), and only over https unless the host is loopback. This list is separate from
 * the remote-policy allow-list (FARM_POLICY_ALLOWED_HOSTS, which may be `*`): that one says where a worker may
 * connect, this one where it may show its credential.
 *
 * Default (nothing set): the loopback names and addresses `localhost`, `127.0.0.1`, `::1`. Setting the variable
 * replaces the default (list loopback again if a local server should get the key too).
 */
import net from "node:net";
import { normalizeHost } from "../url-guard.ts";

export const LLM_KEY_HOSTS_ENV = "FARM_LLM_KEY_HOSTS";
export const DEFAULT_LLM_KEY_HOSTS: readonly string[] = ["localhost", "127.0.0.1", "::1"];
/** The most entries a key-host list may have (it is read by people). */
const MAX_ENTRIES = 64;

const isLoopback = (h: string): boolean => h === "localhost" || (net.isIPv4(h) && h.startsWith("127.")) || h === "::1";

/** The operator's entries, checked: exact names or addresses only (throws RangeError naming a bad one). */
export function parseKeyHosts(entries: readonly string[]): readonly string[] {
  const out: string[] = [];
  for (const raw of entries) {
    const e = raw.trim();
    if (e === "") continue;
    const h = normalizeHost(e);
    if (h.includes("*")) throw new RangeError(`item '${e.slice(0, 80)}' is a wildcard; the API key goes to exact host names or addresses only`);
    if (h.includes("/")) throw new RangeError(`item '${e.slice(0, 80)}' is a range; the API key goes to exact host names or addresses only`);
    if (!net.isIP(h) && !/^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/.test(h)) throw new RangeError(`item '${e.slice(0, 80)}' is not a host name or address`);
    out.push(h);
  }
  if (out.length > MAX_ENTRIES) throw new RangeError(`at most ${MAX_ENTRIES} hosts, got ${out.length}`);
  return out;
}

/**
 * Why the key may not be sent to `endpoint`, or undefined when it may: its host is listed and it is https (or
 * loopback). The reason names the host and the setting, never the key or the URL's query.
 */
export function keyHostProblem(endpoint: string, keyHosts: readonly string[] = DEFAULT_LLM_KEY_HOSTS): string | undefined {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return "the endpoint is not a URL";
  }
  const host = normalizeHost(url.hostname);
  const shown = JSON.stringify(host.slice(0, 100));
  if (!keyHosts.map(normalizeHost).includes(host)) {
    return `the API key (FARM_LLM_API_KEY) is sent only to the hosts in ${LLM_KEY_HOSTS_ENV} (${keyHosts.slice(0, 10).join(", ") || "none"}); ${shown} is not one of them`;
  }
  if (url.protocol !== "https:" && !isLoopback(host)) {
    return `the API key (FARM_LLM_API_KEY) is sent only over https to a host that is not loopback; use https://${host.slice(0, 100)}… or run without a key`;
  }
  return undefined;
}

/** For a policy spec: why an `llm:<model>@<endpoint>` spec may not get the key (undefined for other specs, or when it may). */
export function llmSpecKeyProblem(spec: string, keyHosts: readonly string[] = DEFAULT_LLM_KEY_HOSTS): string | undefined {
  const m = /^llm:[^@]{1,128}@(.+)$/s.exec(spec);
  return m ? keyHostProblem(m[1]!, keyHosts) : undefined;
}
