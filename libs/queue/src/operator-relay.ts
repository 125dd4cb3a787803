/**
 * Human demonstrations (the `human` policy): what a worker and the scheduler share in Redis so an operator's browser,
 * which reaches only the scheduler, can drive a device on any worker host.
 *
 * Keys, under the queue prefix (one hash tag → one cluster slot, so the lease script is legal):
 *   <prefix>:operator:waiting              HASH    episode id → WaitingEpisode JSON (the worker writes it while the
 *                                                  episode runs with an operator's policy; HDEL at its end)
 *   <prefix>:operator:lease:<episode id>   STRING  the operator id driving it, PX grace (the scheduler refreshes it
 *                                                  while the operator's page is open; it lapses `graceMs` after the
 *                                                  page closed; the worker then ends the episode operator_abandoned)
 *   <prefix>:operator:view:<episode id>    STRING  the last `view` message (PX 1 h), for a page that (re)connects
 *   <prefix>:operator:frame:<episode id>   STRING  the last `frame` message (PX 1 h)
 * Pub/sub channels:
 *   <prefix>:operator:ev:<episode id>      worker → scheduler: view, frame and end messages (JSON)
 *   <prefix>:operator:act:<episode id>     scheduler → worker: the lease holder's actions (JSON)
 * `operator` must never be a queue name (BullMQ keys are `<prefix>:<queue>:…`).
 */
import { z } from "zod";

/** Operator ids (the scheduler's FARM_OPERATOR_TOKENS names). */
export const OPERATOR_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;
/** Episode ids as `episodeIdOf` makes them: `<campaign id>-<index>`. */
export const OPERATOR_EPISODE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** At most this many waiting episodes are listed (a bound on the page, not on the farm). */
export const MAX_WAITING_LISTED = 500;
/** Longest action message relayed (an input_text of 2000 characters and an instruction fit). */
export const MAX_ACTION_MESSAGE_CHARS = 8192;
/** How long the last view and frame stay readable without news. */
export const OPERATOR_STATE_TTL_MS = 3_600_000;

export const operatorKeys = (prefix: string) => ({
  waiting: `${prefix}:operator:waiting`,
  lease: (episodeId: string) => `${prefix}:operator:lease:${episodeId}`,
  view: (episodeId: string) => `${prefix}:operator:view:${episodeId}`,
  frame: (episodeId: string) => `${prefix}:operator:frame:${episodeId}`,
  events: (episodeId: string) => `${prefix}:operator:ev:${episodeId}`,
  actions: (episodeId: string) => `${prefix}:operator:act:${episodeId}`,
});

/** An episode waiting for (or driven by) an operator, as the operator page lists it. */
export const waitingEpisodeSchema = z.strictObject({
  v: z.literal(1),
  episodeId: z.string().regex(OPERATOR_EPISODE_PATTERN),
  campaignId: z.string().max(64),
  episodeIndex: z.int().min(0),
  taskId: z.string().max(128),
  goal: z.string().max(2000),
  worker: z.string().max(256),
  serial: z.string().max(128),
  /** When the episode started waiting (ms since the epoch). */
  since: z.number(),
  /** Steps taken so far. */
  step: z.int().min(0),
  /** How long a lease outlives a closed page, and how long the operator may idle on one step. */
  graceMs: z.int().min(100),
  idleMs: z.int().min(100),
  maxSteps: z.int().min(0).optional(),
  maxSec: z.number().min(0).optional(),
});
export type WaitingEpisode = z.infer<typeof waitingEpisodeSchema>;

/** What the operator may send for one step (the scheduler checks the shape; the worker checks the action). */
export const operatorActionBodySchema = z.strictObject({
  action: z.record(z.string(), z.unknown()),
  instruction: z.string().max(500).optional(),
  /** The step the operator acted on (a stale step's action is refused). */
  step: z.int().min(0),
});
export type OperatorActionBody = z.infer<typeof operatorActionBodySchema>;

/** An action on the `act` channel. */
export interface OperatorActionMessage extends OperatorActionBody {
  operator: string;
  /** When the scheduler relayed it (ms since the epoch). */
  at: number;
}

/** Messages on the `ev` channel (and the last view / frame keys). */
export type OperatorEvent =
  | { type: "view"; step: number; goal: string; screen: { width: number; height: number }; elements?: unknown[]; previous?: unknown; maxSteps?: number; maxSec?: number; at: number }
  | { type: "frame"; seq: number; at: number; mime: string; width: number; height: number; data: string }
  | { type: "end"; outcome: string; cause: string; steps: number; at: number };

/**
 * Takes or renews the lease: KEYS[1] lease, KEYS[2] waiting; ARGV operator, episode id, grace ms.
 * Returns 1 (held by the caller now), 0 (another operator holds it), -1 (not waiting for an operator).
 */
export const LEASE_SCRIPT = `
if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 0 then return -1 end
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', tonumber(ARGV[3]))
return 1`;

/** Drops the lease if the caller holds it: KEYS[1] lease; ARGV operator. Returns 1 when dropped. */
export const RELEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;
