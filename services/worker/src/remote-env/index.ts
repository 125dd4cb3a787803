/**
 * Remote environments over dm_env_rpc v1 on this worker host (`farm worker --env-port P`): the server,
 * built from the worker's config and its device pool. See libs/dm-env-rpc/README.md for the protocol.
 */
import { episodeConfigDefaults, type EpisodeConfig } from "@farm/episode";
import type { Logger } from "@farm/log";
import type { CommitDeps } from "../commit-flow.ts";
import type { RemoteEnvConfig } from "../config.ts";
import type { DevicePool } from "../device-lease.ts";
import type { TaskCatalog } from "../task-catalog.ts";
import { RemoteEnvServer } from "./env-server.ts";

export { RemoteEnvServer } from "./env-server.ts";

export interface RemoteEnvDeps {
  pool: DevicePool;
  catalog: TaskCatalog;
  commit: CommitDeps;
  episode: EpisodeConfig;
  logger: Logger;
}

export function startRemoteEnv(c: RemoteEnvConfig, d: RemoteEnvDeps): Promise<RemoteEnvServer> {
  const frameEvery = d.episode.frameEvery ?? episodeConfigDefaults.frameEvery;
  return RemoteEnvServer.start({ host: c.host, port: c.port, token: c.token, idleTimeoutMs: c.idleTimeoutMs, catalog: d.catalog, logger: d.logger, world: { pool: d.pool, commit: d.commit, logger: d.logger, frameEvery } });
}
