/**
 * Queue names and the key prefix every farm process must agree on.
 *
 * The prefix carries a Redis Cluster hash tag (`{farm}`): every key BullMQ and the scheduler write then
 * hashes to one slot, which multi-key Lua scripts require on a cluster. BullMQ's own `prefix` option is
 * used for it; ioredis `keyPrefix` must not be set (BullMQ refuses it).
 */

/** The queues of the farm. BullMQ forbids `:` in queue names. Never name a queue `campaign` (see campaign-keys.ts). */
export const QUEUE_NAMES = {
  /** One job per episode: scheduler → worker. */
  episodes: "episodes",
} as const;

export type QueueName = (typeof QUEUE_NAMES)[keyof typeof QUEUE_NAMES];

export const DEFAULT_QUEUE_PREFIX = "{farm}";

/**
 * The prefix to use: the configured value (services read `FARM_QUEUE_PREFIX` in their config), else `{farm}`.
 * A prefix without a `{…}` hash tag is allowed (single-node Redis) but cannot run on a cluster.
 */
export function resolveQueuePrefix(configured?: string): string {
  const prefix = configured ?? DEFAULT_QUEUE_PREFIX;
  if (prefix === "" || /[\s:]/.test(prefix)) {
    throw new Error(`invalid queue prefix '${prefix}': must be non-empty without spaces or ':' (e.g. '{farm}')`);
  }
  return prefix;
}
