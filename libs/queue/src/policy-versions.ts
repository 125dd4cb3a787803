/**
 * A campaign's policy versions (issue 38): a learner raises the campaign's current version through the scheduler's
 * API (`POST /campaigns/:id/policy-version`); workers read it (cached for a second) to tell how far an episode's
 * steps lag behind (`--max-staleness`). One Redis LIST under the campaign's hash-tagged prefix:
 *
 *   <prefix>:campaign:<id>:policy-versions   LIST of versions, oldest first; the last is the current one
 *
 * Versions only go forward: the same version again changes nothing, a whole-number version below a whole-number
 * current one is refused, and so is a version raised before (the list is the order non-numeric versions are compared
 * by). The list keeps the newest MAX_CAMPAIGN_VERSIONS.
 */
import { z } from "zod";
import { campaignKeys } from "./campaign-keys.ts";
import type { RedisClient as Redis } from "./connection.ts";
import { LuaScript } from "./lua-script.ts";

/** Versions kept per campaign (older ones fall off: they are no longer comparable by order, whole numbers still are). */
export const MAX_CAMPAIGN_VERSIONS = 1000;

/** A policy version as the API takes it: 1-128 printable characters, or a whole number (kept as its text). */
export const policyVersionSchema = z.union([
  z
    .string()
    .min(1)
    .max(128)
    .refine((v) => !/[\u0000-\u001f\u007f-\u009f]/.test(v), "no control characters"),
  z.int().transform((n) => String(n)),
]);

/** `POST /campaigns/:id/policy-version` body. */
export const raiseVersionInputSchema = z.strictObject({ version: policyVersionSchema });

/** `--max-staleness V [--on-stale mark|end]` as a job option. */
export const stalenessOptionSchema = z.strictObject({ maxVersions: z.int().min(0).max(1_000_000), onStale: z.enum(["mark", "end"]).optional() });

export function policyVersionsKey(prefix: string, campaignId: string): string {
  return `${campaignKeys(prefix, campaignId).record}:policy-versions`;
}

/** What a raise came to: the campaign's current version afterwards and how many versions it has raised (kept). */
export interface RaisedVersion {
  /** `raised`: a new current version; `same`: it was the current one already; `lower` / `seen`: refused (it would go back). */
  result: "raised" | "same" | "lower" | "seen";
  current: string;
  previous?: string;
  versions: number;
}

const RAISE = new LuaScript(`
local function whole(s)
  local n = tonumber(s)
  if n and n % 1 == 0 and #s <= 15 and tostring(n) == s then return n end
  return nil
end
local v = ARGV[1]
local cur = redis.call('LINDEX', KEYS[1], -1)
if cur == v then return {'same', v, '', redis.call('LLEN', KEYS[1])} end
if cur then
  local a = whole(cur)
  local b = whole(v)
  if a and b and b < a then return {'lower', cur, '', 0} end
  if redis.call('LPOS', KEYS[1], v) then return {'seen', cur, '', 0} end
end
redis.call('RPUSH', KEYS[1], v)
redis.call('LTRIM', KEYS[1], -tonumber(ARGV[2]), -1)
return {'raised', v, cur or '', redis.call('LLEN', KEYS[1])}
`);

/** Raises the campaign's current policy version, atomically; a version that would go back is refused (`lower`, `seen`: nothing changed). */
export async function raisePolicyVersion(redis: Redis, prefix: string, campaignId: string, version: string): Promise<RaisedVersion> {
  const r = (await RAISE.run(redis, [policyVersionsKey(prefix, campaignId)], [version, MAX_CAMPAIGN_VERSIONS])) as [string, string, string, number];
  const [result, current, previous, versions] = r;
  return { result: result as RaisedVersion["result"], current, ...(previous ? { previous } : {}), versions: Number(versions) };
}

/** The campaign's versions (oldest first) and its current one; undefined when none was raised. */
export async function readPolicyVersions(redis: Redis, prefix: string, campaignId: string): Promise<{ current: string; order: string[] } | undefined> {
  const order = await redis.lrange(policyVersionsKey(prefix, campaignId), 0, -1);
  const current = order[order.length - 1];
  return current === undefined ? undefined : { current, order };
}
