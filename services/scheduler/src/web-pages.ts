/**
 * The scheduler's web pages beyond the API, mounted by http.ts in one call: the shared front end's assets,
 * the fleet page with its chart series (a sampler of Redis, bounded to an hour), and the episode viewer and
 * live reports over the folders the workers write (FARM_TRAJECTORIES; none: the viewer says how to set it).
 */
import express, { type Response, type Router } from "express";
import { openAvroEpisodeSource, type EpisodeSource } from "@farm/dataset";
import type { Logger } from "@farm/log";
import { fleetRoutes } from "./fleet-routes.ts";
import { startFleetSampler, type FleetSampler } from "./fleet-series.ts";
import type { Scheduler } from "./scheduler.ts";
import { SCHEDULER_PAGES, WEB_ASSET_ROUTES, webAssetRouter } from "./web-assets.ts";
import { VIEWER_ROUTES, viewerRoutes } from "./viewer-routes.ts";

type SendError = (res: Response, status: number, code: string, message: string) => void;

export interface WebPagesOptions {
  scheduler: Scheduler;
  sendError: SendError;
  /** A token guards the server (the pages show a log-out button). */
  login: boolean;
  /** Trajectory folders the workers write (the viewer's and reports' episodes). */
  trajectories?: readonly string[];
  /** How often the fleet charts sample Redis (default 10 s). */
  seriesSampleMs?: number;
  log?: Logger;
}

export interface WebPages {
  router: Router;
  close(): void;
}

/** The pages' routes, for the 405 table and the OpenAPI document. */
export const WEB_PAGE_ROUTES: [string, string][] = [...WEB_ASSET_ROUTES, ["/fleet/series", "GET, HEAD"], ...VIEWER_ROUTES];

export async function mountWebPages(o: WebPagesOptions): Promise<WebPages> {
  const sampler: FleetSampler = startFleetSampler(o.scheduler, { sampleMs: o.seriesSampleMs ?? 10_000, ...(o.log ? { log: o.log } : {}) });
  let source: EpisodeSource | undefined;
  if (o.trajectories && o.trajectories.length > 0) source = await openAvroEpisodeSource(o.trajectories);
  const router = express.Router();
  router.use(webAssetRouter({ login: o.login, pages: SCHEDULER_PAGES }));
  router.use(fleetRoutes(o.scheduler, o.sendError, sampler));
  router.use(
    viewerRoutes({
      source,
      noSourceHint: "the scheduler reads no trajectory folders: start it with --trajectories DIR (FARM_TRAJECTORIES), the folder(s) its workers write",
      sendError: o.sendError,
      ...(o.log ? { log: o.log } : {}),
      ...(o.trajectories ? { paths: o.trajectories } : {}),
    }),
  );
  return {
    router,
    close() {
      sampler.close();
      source?.close();
    },
  };
}
