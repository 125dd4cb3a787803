/**
 * The scheduler service in a child process (`farm scheduler`), as in production: a worker host's CPU is then
 * the worker's alone, and the scheduler's is read from /proc beside it.
 */
import { HttpCampaignClient } from "@farm/scheduler";
import { startFarmChild } from "./farm-child.ts";

export interface SchedulerChild {
  pid: number | undefined;
  client: HttpCampaignClient;
  close(): Promise<void>;
}

export async function startSchedulerChild(o: { redisUrl: string; prefix: string; taskPaths: string[]; windowSize: number }): Promise<SchedulerChild> {
  let api = "";
  const c = await startFarmChild(
    ["scheduler", "--redis", o.redisUrl, "--prefix", o.prefix, "--port", "0", "--window", String(o.windowSize), ...o.taskPaths.flatMap((t) => ["--tasks", t])],
    (line) => {
      if (!line.startsWith("{")) return false;
      const ready = JSON.parse(line) as { event?: string; api?: string };
      if (ready.event === "scheduler:ready" && ready.api) api = ready.api;
      return api !== "";
    },
  );
  return { pid: c.process.pid, client: new HttpCampaignClient(api), close: () => c.close() };
}
