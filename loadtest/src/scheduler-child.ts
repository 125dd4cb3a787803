/**
 * The scheduler service in a child process (`farm scheduler`), as in production: a worker host's CPU is then
 * the worker's alone, and the scheduler's is read from /proc beside it.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { HttpCampaignClient } from "@farm/scheduler";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

export interface SchedulerChild {
  pid: number | undefined;
  client: HttpCampaignClient;
  stop(): Promise<void>;
}

export async function startSchedulerChild(o: { redisUrl: string; prefix: string; taskPaths: string[]; windowSize: number }): Promise<SchedulerChild> {
  const args = ["scheduler", "--redis", o.redisUrl, "--prefix", o.prefix, "--port", "0", "--window", String(o.windowSize), ...o.taskPaths.flatMap((t) => ["--tasks", t])];
  const child = spawn(process.execPath, [path.join(REPO, "services/cli/bin/farm.js"), ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, FARM_LOG_LEVEL: "warn" },
  });
  let err = "";
  child.stderr!.on("data", (d: Buffer) => (err = (err + d.toString()).slice(-5000)));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const api = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (!line.startsWith("{")) return;
      const ready = JSON.parse(line) as { event?: string; api?: string };
      if (ready.event === "scheduler:ready" && ready.api) resolve(ready.api);
    });
    void exited.then(() => reject(new Error(`farm scheduler exited early:\n${err}`)));
  });
  return {
    pid: child.pid,
    client: new HttpCampaignClient(api),
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}
