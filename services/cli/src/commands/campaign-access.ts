/**
 * How the campaign commands (submit, status, watch, cancel) reach campaigns.
 *
 * Default: Redis directly (REDIS_URL or --redis), through a Scheduler that is not started — so the
 * commands work without the scheduler's HTTP API. `submit` then only stores the campaign: enqueueing,
 * top-up, counting and finishing are done by a running `farm scheduler` (or any process that started a
 * Scheduler) on the same Redis and prefix, which picks the campaign up within its tick (2 s).
 * With --api URL (or FARM_API_URL) they use the HTTP API instead, sending --token / FARM_API_TOKEN.
 */
import { cliConfig } from "../config.ts";
import type { Command } from "commander";
import type { CampaignClient } from "@farm/scheduler";
import { collect } from "./options.ts";

export interface AccessOptions {
  api?: string;
  token?: string;
  redis?: string;
  prefix?: string;
  tasks: string[];
}

export function addAccessOptions(cmd: Command): Command {
  return cmd
    .option("--api <url>", "scheduler HTTP API (default: FARM_API_URL; unset = talk to Redis directly)")
    .option("--token <token>", "API token for state changes (default: FARM_API_TOKEN)")
    .option("--redis <url>", "Redis URL when not using --api (default: REDIS_URL or redis://127.0.0.1:6379)")
    .option("--prefix <prefix>", "queue prefix (default: FARM_QUEUE_PREFIX or {farm})")
    .option("--tasks <path>", "task file or folder to validate against when not using --api (repeatable; default: tasks)", collect, [] as string[]);
}

export async function openCampaignClient(o: AccessOptions, extraTaskPaths: string[] = []): Promise<CampaignClient> {
  const api = o.api ?? cliConfig().apiUrl;
  if (api) {
    const { HttpCampaignClient } = await import("@farm/scheduler/client");
    return new HttpCampaignClient(api, o.token ?? cliConfig().apiToken);
  }
  const { Scheduler } = await import("@farm/scheduler/campaigns");
  const taskPaths = [...(o.tasks.length ? o.tasks : ["tasks"]), ...extraTaskPaths];
  const redisUrl = o.redis ?? cliConfig().redisUrl;
  const prefix = o.prefix ?? cliConfig().queuePrefix;
  // enqueueOnSubmit false: the scheduler service enqueues (and counts it in its /metrics) on its next tick.
  const llmKeyHosts = cliConfig().llmKeyHosts;
  return Scheduler.create({ taskPaths, enqueueOnSubmit: false, ...(redisUrl ? { redisUrl } : {}), ...(prefix ? { prefix } : {}), ...(llmKeyHosts ? { llmKeyHosts } : {}) });
}

/** Runs `fn` with a client and always closes it. */
export async function withCampaignClient<T>(o: AccessOptions, fn: (c: CampaignClient) => Promise<T>, extraTaskPaths: string[] = []): Promise<T> {
  const client = await openCampaignClient(o, extraTaskPaths);
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}
