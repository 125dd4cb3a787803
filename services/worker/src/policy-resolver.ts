/**
 * A job's policy spec → a Policy. Jobs name scripted and module policies by name only; the file comes
 * from the worker's own policy folder (an allow-list), never from a path in the job. Remote (`http:`)
 * policies must point at a host in the worker's allow-list (loopback + FARM_POLICY_ALLOWED_HOSTS); so must
 * `llm:<model>@<endpoint>` ones, whose settings ride in the job (`ref.llm`) and whose API key is this worker's own
 * FARM_LLM_API_KEY (never in a job), sent only to the worker's key hosts (FARM_LLM_KEY_HOSTS, https unless loopback):
 * a job naming another endpoint is rejected (POLICY_INVALID) before any request.
 */
import { statSync } from "node:fs";
import path from "node:path";
import { JobRejectedError, type PolicyRef } from "@farm/queue";
import { policyFromSpec, redactUrl, type Policy } from "@farm/policy";
import { coerceError } from "@farm/errors";
import type { PolicyTransport } from "./policy-transport.ts";
import type { OperatorEpisode } from "./operator-relay.ts";
import { POLICY_UNKNOWN_CODE, policyFailureCode } from "./failure-codes.ts";

/** The spec for messages: a remote URL without credentials or query values. */
export function shownSpec(spec: string): string {
  const m = /^(http(?:-batch)?:|llm:[^@]{1,128}@)?(https?:\/\/.*)$/i.exec(spec);
  return m ? `${m[1] ?? ""}${redactUrl(m[2]!)}` : spec.slice(0, 200);
}

export async function policyForJob(ref: PolicyRef, policyDir: string | undefined, allowedHosts?: readonly string[], transport?: PolicyTransport, episode?: OperatorEpisode): Promise<Policy> {
  const spec = ref.spec;
  if (spec === "human") {
    // A person drives the device through the scheduler's operator page; the relay is this host's.
    if (!transport?.operators || !episode) throw new JobRejectedError(POLICY_UNKNOWN_CODE, "policy human: this worker relays no operators");
    return policyFromSpec("human", { human: { channel: transport.operators.channel(episode), actDeadlineMs: transport.operators.deadlineFor(episode) } });
  }
  const shown = shownSpec(spec);
  const reject = (detail: string) => new JobRejectedError(POLICY_UNKNOWN_CODE, detail);
  let cliSpec = spec;
  const named = /^(scripted|module):(.+)$/.exec(spec);
  if (named) {
    const [, kind, name] = named as unknown as [string, string, string];
    // A plain file name only: no separators, no dot files, no '..'.
    if (name.startsWith(".") || /[/\\\0]/.test(name) || name !== path.basename(name)) throw reject(`policy name ${JSON.stringify(name.slice(0, 80))} must be a plain file name (no '/', '\\', leading '.')`);
    if (!policyDir) throw reject(`${kind} policy '${name}': this worker has no policy folder (--policy-dir)`);
    const file = path.join(policyDir, name);
    let isFile = false;
    try {
      isFile = statSync(file).isFile(); // a FIFO or device would block the reader
    } catch {
      isFile = false;
    }
    if (!isFile) throw reject(`${kind} policy '${name}' is not a file in this worker's policy folder`);
    cliSpec = `${kind}:${file}`;
  }
  try {
    const http = { ...(allowedHosts ? { allowedHosts } : {}), ...(transport ? { onExchange: transport.onExchange, onForeignBody: transport.onForeignBody, ...transport.pixels } : {}) };
    const llm = { ...ref.llm, ...(allowedHosts ? { allowedHosts } : {}), ...(transport ? { onExchange: transport.onExchange, onForeignBody: transport.onForeignBody, ...(transport.logger ? { logger: transport.logger } : {}), ...(transport.llmApiKey ? { apiKey: transport.llmApiKey } : {}), ...(transport.llmKeyHosts ? { keyHosts: transport.llmKeyHosts } : {}) } : {}) };
    return await policyFromSpec(cliSpec, { http, llm, ...(transport ? { batcher: transport.batcher } : {}) });
  } catch (e) {
    // A remote policy that is down may come back: retry. Anything else is a bad spec: fail now.
    const code = policyFailureCode(e);
    if (!code) throw new Error(`policy ${shown}: ${coerceError(e).message}`);
    throw new JobRejectedError(code, `policy ${shown}: ${coerceError(e).message}`);
  }
}
