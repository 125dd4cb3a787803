/**
 * BullMQ connection options from @farm/queue's `redisConnection`. ioredis 6's RedisOptions does not
 * type-check against BullMQ 6's ConnectionOptions (it is the same plain object at run time), hence the cast.
 */
import type { ConnectionOptions } from "bullmq";
import { redisConnection, type ConnectionRole } from "@farm/queue";

export function bullConnection(url: string, role: ConnectionRole): ConnectionOptions {
  return redisConnection(url, role) as unknown as ConnectionOptions;
}
