/**
 * `farm scheduler`: the scheduler service (HTTP API, /metrics, bull-board at /ui, top-up and counting)
 * until SIGTERM/SIGINT, then drains (HTTP, queue events, queue, Redis) and exits 0.
 * Flags override the environment (REDIS_URL, FARM_QUEUE_PREFIX, FARM_SCHEDULER_HOST/PORT, FARM_API_TOKEN,
 * FARM_TASKS, FARM_WINDOW_SIZE). stdout: one JSON line `{"event":"scheduler:ready",…}`; logs on stderr.
 */
import type { Command } from "commander";
import { collect, parseIntOption } from "./options.ts";
import type { CommandModule } from "./types.ts";

interface SchedulerCliOptions {
  redis?: string;
  prefix?: string;
  host?: string;
  port?: string;
  tasks: string[];
  window?: string;
  trajectories: string[];
}

export const schedulerCommand: CommandModule = {
  register(program: Command) {
    program
      .command("scheduler")
      .description("run the scheduler service: campaigns → episode jobs, HTTP API, /metrics, /ui (until SIGTERM)")
      .option("--redis <url>", "Redis URL (default: REDIS_URL or redis://127.0.0.1:6379)")
      .option("--prefix <prefix>", "queue prefix (default: FARM_QUEUE_PREFIX or {farm})")
      .option("--host <host>", "HTTP bind address (default: FARM_SCHEDULER_HOST or 127.0.0.1; non-loopback needs FARM_API_TOKEN)")
      .option("--port <port>", "HTTP port, 0 = a free one (default: FARM_SCHEDULER_PORT or 8420)")
      .option("--tasks <path>", "task file or folder (repeatable; default: FARM_TASKS or tasks)", collect, [] as string[])
      .option("--window <n>", "most in-flight episodes per campaign (default: FARM_WINDOW_SIZE or 1000)")
      .option("--trajectories <dir>", "trajectory folder the workers write, for the episode viewer and reports (repeatable; default: FARM_TRAJECTORIES)", collect, [] as string[])
      .action(async (o: SchedulerCliOptions) => {
        // The flags are checked before the service loads (a bad command line fails at once).
        const flags = {
          ...(o.redis ? { redisUrl: o.redis } : {}),
          ...(o.prefix ? { prefix: o.prefix } : {}),
          ...(o.host ? { host: o.host } : {}),
          ...(o.port !== undefined ? { port: parseIntOption("port", o.port, 0) } : {}),
          ...(o.tasks.length ? { tasks: o.tasks } : {}),
          ...(o.window !== undefined ? { windowSize: parseIntOption("window", o.window, 1) } : {}),
          ...(o.trajectories.length ? { trajectories: o.trajectories } : {}),
        };
        const { loadSchedulerConfig, runSchedulerUntilSignal } = await import("@farm/scheduler");
        const config = loadSchedulerConfig(flags);
        await runSchedulerUntilSignal(config, (r) => {
          process.stdout.write(`${JSON.stringify({ event: "scheduler:ready", api: r.http.url, ui: `${r.http.url}/ui`, metrics: `${r.http.url}/metrics` })}\n`);
        });
      });
  },
};
