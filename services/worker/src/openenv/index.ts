/**
 * Farm devices as OpenEnv environments on this worker host (`farm worker --openenv-port P`): the server, built
 * from the worker's config and its device pool (shared with the dm_env_rpc server's leases). Protocol: server.ts, messages.ts.
 */
import { FarmError } from "@farm/errors";
import { episodeConfigDefaults, type EpisodeConfig } from "@farm/episode";
import type { Logger } from "@farm/log";
import type { FarmMetrics } from "@farm/metrics";
import type { CommitDeps } from "../commit-flow.ts";
import type { OpenEnvConfig } from "../config.ts";
import type { DevicePool } from "../device-lease.ts";
import type { TaskCatalog } from "../task-catalog.ts";
import { OpenEnvServer } from "./server.ts";

export { OpenEnvServer } from "./server.ts";

export interface OpenEnvDeps {
  pool: DevicePool;
  catalog: TaskCatalog;
  commit: CommitDeps;
  episode: EpisodeConfig;
  metrics: FarmMetrics;
  logger: Logger;
  taskServerAllowedHosts: readonly string[];
  version: string;
}

export function startOpenEnv(c: OpenEnvConfig, d: OpenEnvDeps): Promise<OpenEnvServer> {
  if (c.defaultTask !== undefined && !d.catalog.byId.has(c.defaultTask)) {
    throw new FarmError("openenv_config", `openenvTask (FARM_OPENENV_TASK / --openenv-task): '${c.defaultTask.slice(0, 80)}' is not a task this worker loaded; loaded: ${[...d.catalog.byId.keys()].slice(0, 50).join(", ")}`);
  }
  const frameEvery = d.episode.frameEvery ?? episodeConfigDefaults.frameEvery;
  return OpenEnvServer.start({
    host: c.host,
    port: c.port,
    token: c.token,
    idleTimeoutMs: c.idleTimeoutMs,
    maxSessions: c.maxSessions,
    defaultTask: c.defaultTask,
    version: d.version,
    logger: d.logger,
    session: { pool: d.pool, catalog: d.catalog, commit: d.commit, metrics: d.metrics, logger: d.logger, frameEvery, taskServerAllowedHosts: d.taskServerAllowedHosts },
  });
}
