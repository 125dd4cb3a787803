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

const SUMMARIES: Record<string, string> = {
  "/fleet/series": "the fleet page's chart series: the last hour of samples per campaign and host (JSON)",
  "/view/": "the episode viewer's list of episodes (HTML; ?campaign, task, from, to, limit)",
  "/view/episode": "one episode with its step player (HTML; ?id=…#step=N)",
  "/api/episodes": "episodes of the trajectory folders (JSON; ?campaign, task, from, to: ms since the epoch, limit)",
  "/api/episodes/{id}": "one episode: summary, checks, steps without screens (JSON)",
  "/api/episodes/{id}/screens/{n}/image": "screen n of an episode (0 = initial, n = after step n) as PNG, JPEG or WebP",
  "/api/episodes/{id}/screens/{n}/elements": "screen n's element list, device size and tree (JSON)",
  "/report": "the evaluation report of a campaign (?campaign, compare), or the campaigns to report on (HTML)",
  "/web/session.json": "what the pages' header shows: whether a login guards the server, the pages (JSON)",
};

/** The OpenAPI path items of WEB_PAGE_ROUTES (openapi.ts spreads them into the document). */
export function webPagesOpenApi(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [route] of WEB_PAGE_ROUTES) {
    const p = route.replace(/:([A-Za-z]+)/g, "{$1}");
    const params = [...p.matchAll(/\{([A-Za-z]+)\}/g)].map((m) => ({ name: m[1], in: "path", required: true, schema: { type: "string" } }));
    const asset = p.startsWith("/web/") && p !== "/web/session.json";
    const type = p.endsWith(".css") ? "text/css" : p.endsWith(".js") ? "text/javascript" : p.includes("/image") ? "image/png" : p.startsWith("/api/") || p.endsWith(".json") || p === "/fleet/series" ? "application/json" : "text/html";
    const id = `web${p.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ""))}`;
    out[p] = {
      get: {
        operationId: id,
        summary: SUMMARIES[p] ?? (asset ? `a shared asset of the farm's pages (${p.slice(5)})` : p),
        ...(params.length ? { parameters: params } : {}),
        responses: { "200": { description: type, content: { [type]: { schema: { type: "string" } } } }, "404": { description: "not found (no trajectories configured, no such episode or screen)" } },
      },
    };
  }
  return out;
}
