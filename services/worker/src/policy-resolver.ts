/**
 * A job's policy spec → a Policy. Jobs name scripted and module policies by name only; the file comes
 * from the worker's own policy folder (an allow-list), never from a path in the job.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { JobRejectedError, type PolicyRef } from "@farm/queue";
import { isPolicyError, policyFromSpec, type Policy } from "@farm/policy";
import { coerceError } from "@farm/errors";

export async function policyForJob(ref: PolicyRef, policyDir: string | undefined): Promise<Policy> {
  const spec = ref.spec;
  const reject = (detail: string) => new JobRejectedError("POLICY_UNKNOWN", detail);
  let cliSpec = spec;
  const named = /^(scripted|module):(.+)$/.exec(spec);
  if (named) {
    const [, kind, name] = named as unknown as [string, string, string];
    if (name.startsWith(".")) throw reject(`policy name '${name}' must not start with '.'`);
    if (!policyDir) throw reject(`${kind} policy '${name}': this worker has no policy folder (--policy-dir)`);
    const file = path.join(policyDir, name);
    if (!existsSync(file)) throw reject(`${kind} policy '${name}' is not in this worker's policy folder`);
    cliSpec = `${kind}:${file}`;
  }
  try {
    return await policyFromSpec(cliSpec);
  } catch (e) {
    // A remote policy that is down may come back: retry. Anything else is a bad spec: fail now.
    if (isPolicyError(e) && e.retryable) throw new Error(`policy ${spec}: ${e.message}`);
    throw new JobRejectedError("POLICY_INVALID", `policy ${spec}: ${coerceError(e).message}`);
  }
}
