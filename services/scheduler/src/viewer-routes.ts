/**
 * The episode viewer and the live reports, over an episode source (the scheduler's trajectory folders, or the
 * folder `farm trajectories view` was given):
 *
 *   GET /view/                                     the episode list (?campaign, task, from, to: ms since the epoch, limit)
 *   GET /view/episode?id=ID#step=N                 one episode with its step player
 *   GET /api/episodes                              { episodes, total, source } (same filters)
 *   GET /api/episodes/:id                          the episode: summary, checks, steps (no screens)
 *   GET /api/episodes/:id/screens/:n/image         screen n (0 = initial, n = after step n) as PNG/JPEG/WebP
 *   GET /api/episodes/:id/screens/:n/elements      its element list, device size and tree
 *   GET /report[?campaign=A[&compare=B]]           the evaluation report (campaign list without a campaign)
 *
 * Ids are checked against a pattern before anything is read; a page never holds more than one screen.
 */
import { mkdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import express, { type Response, type Router } from "express";
import { evaluate, type EpisodeSource } from "@farm/dataset";
import type { Logger } from "@farm/log";
import { FarmError } from "@farm/errors";
import { pageHtml, PAGE_HEADERS } from "./web-assets.ts";
import { reportHtml } from "./report-page.ts";

type SendError = (res: Response, status: number, code: string, message: string) => void;

/** Episode ids are `<campaign>-<index>`; campaign and task ids are short printable words. */
const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@+=-]{0,299}$/;
const MAX_SCREEN = 1_000_000;

export const VIEWER_ROUTES: [string, string][] = [
  ["/view/", "GET, HEAD"],
  ["/view/episode", "GET, HEAD"],
  ["/api/episodes", "GET, HEAD"],
  ["/api/episodes/:id", "GET, HEAD"],
  ["/api/episodes/:id/screens/:n/image", "GET, HEAD"],
  ["/api/episodes/:id/screens/:n/elements", "GET, HEAD"],
  ["/report", "GET, HEAD"],
];

export const VIEWER_PAGE_ASSETS = ["vendor/uPlot.min.css", "farm.css", "vendor/uPlot.iife.min.js", "farm.js", "chart.js", "screen.js", "viewer.js"] as const;

export interface ViewerRoutesOptions {
  /** The episodes shown; undefined: the server has none (the API says how to give it some). */
  source: EpisodeSource | undefined;
  /** Why there is no source (shown in the 404). */
  noSourceHint?: string;
  sendError: SendError;
  log?: Logger;
  /** Where report exports of Avro campaigns go (default: the OS temp folder). */
  workDir?: string;
  /** The source's folders, for reports of Avro campaigns. */
  paths?: readonly string[];
}

function optionalId(v: unknown, name: string): string | undefined {
  if (v === undefined || v === "") return undefined;
  if (typeof v !== "string" || !ID_PATTERN.test(v)) throw new BadQuery(`${name} must be an id (letters, digits, . _ : @ + = -; at most 300 characters)`);
  return v;
}
function optionalInt(v: unknown, name: string, max: number): number | undefined {
  if (v === undefined || v === "") return undefined;
  const n = Number(v);
  if (typeof v !== "string" || !Number.isSafeInteger(n) || n < 0 || n > max) throw new BadQuery(`${name} must be an integer 0..${max}`);
  return n;
}

/** A viewer or report request the server cannot answer as asked (400). */
class BadQuery extends FarmError<"BAD_REQUEST"> {
  constructor(message: string) {
    super("BAD_REQUEST", message, { retryable: false });
    this.name = "BadQuery";
  }
}

export function viewerRoutes(o: ViewerRoutesOptions): Router {
  const r = express.Router();
  const { sendError } = o;
  const html = (body: string) => (_req: express.Request, res: Response) => {
    res.type("html").set(PAGE_HEADERS).send(body);
  };
  r.get("/view/", html(pageHtml({ title: "episodes", page: "episodes", assets: VIEWER_PAGE_ASSETS })));
  r.get("/view/episode", html(pageHtml({ title: "episode", page: "episode", assets: VIEWER_PAGE_ASSETS })));

  const withSource = (fn: (s: EpisodeSource, req: express.Request, res: Response) => Promise<unknown>) => async (req: express.Request, res: Response) => {
    const s = o.source;
    if (!s) return sendError(res, 404, "NO_TRAJECTORIES", o.noSourceHint ?? "this server reads no trajectories");
    try {
      await fn(s, req, res);
    } catch (e) {
      if (e instanceof BadQuery) return sendError(res, 400, "BAD_REQUEST", e.message);
      throw e;
    }
  };
  const episodeId = (req: express.Request) => {
    const id = String(req.params.id);
    if (!ID_PATTERN.test(id)) throw new BadQuery("episode id malformed");
    return id;
  };
  const screenNo = (req: express.Request) => {
    const n = optionalInt(String(req.params.n), "screen", MAX_SCREEN);
    if (n === undefined) throw new BadQuery("screen number missing");
    return n;
  };

  r.get(
    "/api/episodes",
    withSource(async (s, req, res) => {
      const q = req.query;
      const filter = {
        ...(optionalId(q.campaign, "campaign") !== undefined ? { campaign: q.campaign as string } : {}),
        ...(optionalId(q.task, "task") !== undefined ? { task: q.task as string } : {}),
        ...(optionalInt(q.from, "from", 1e14) !== undefined ? { from: Number(q.from) } : {}),
        ...(optionalInt(q.to, "to", 1e14) !== undefined ? { to: Number(q.to) } : {}),
        ...(optionalInt(q.limit, "limit", 5000) !== undefined ? { limit: Number(q.limit) } : {}),
      };
      const list = await s.list(filter);
      res.set("cache-control", "no-store").json({ ...list, source: s.label });
    }),
  );
  r.get(
    "/api/episodes/:id",
    withSource(async (s, req, res) => {
      const id = episodeId(req);
      const e = await s.episode(id);
      if (!e) return sendError(res, 404, "EPISODE_NOT_FOUND", `no episode ${id} in ${s.label}`);
      res.set("cache-control", "no-store").json(e);
    }),
  );
  r.get(
    "/api/episodes/:id/screens/:n/image",
    withSource(async (s, req, res) => {
      const id = episodeId(req);
      const n = screenNo(req);
      const img = await s.screenImage(id, n);
      if (!img) return sendError(res, 404, "SCREEN_NOT_RECORDED", `episode ${id} has no frame of screen ${n}`);
      res.type(img.type).set({ "cache-control": "private, max-age=3600", "x-content-type-options": "nosniff" }).send(Buffer.from(img.bytes.buffer, img.bytes.byteOffset, img.bytes.byteLength));
    }),
  );
  r.get(
    "/api/episodes/:id/screens/:n/elements",
    withSource(async (s, req, res) => {
      const id = episodeId(req);
      const n = screenNo(req);
      const els = await s.screenElements(id, n);
      if (!els) return sendError(res, 404, "SCREEN_NOT_RECORDED", `episode ${id} has no element list of screen ${n}`);
      res.set("cache-control", "private, max-age=3600").json(els);
    }),
  );

  // Reports: a campaign (or two) of this source, through the same SQL as `farm report`.
  const workDir = o.workDir ?? path.join(os.tmpdir(), `farm-reports-${process.pid}`);
  let reports: Promise<unknown> = Promise.resolve();
  r.get(
    "/report",
    withSource(async (s, req, res) => {
      const campaign = optionalId(req.query.campaign, "campaign");
      const compare = optionalId(req.query.compare, "compare");
      if (!campaign) {
        const { episodes } = await s.list({ limit: 5000 });
        const campaigns = new Map<string, { taskIds: Set<string>; policy: string; episodes: number; endedAt: number }>();
        for (const e of episodes) {
          const c = campaigns.get(e.campaignId) ?? { taskIds: new Set(), policy: e.policy, episodes: 0, endedAt: 0 };
          c.taskIds.add(e.taskId);
          c.episodes++;
          c.endedAt = Math.max(c.endedAt, e.endedAt);
          campaigns.set(e.campaignId, c);
        }
        const list = [...campaigns].map(([id, c]) => ({ id, tasks: [...c.taskIds], policy: c.policy, episodes: c.episodes, endedAt: c.endedAt }));
        return res.type("html").set(PAGE_HEADERS).send(pageHtml({ title: "reports", page: "report-index", assets: ["farm.css", "farm.js", "report.js"], data: { campaigns: list, source: s.label } }));
      }
      mkdirSync(workDir, { recursive: true });
      const side = async (id: string) => {
        const files = s.files ? await s.files({ campaign: id }) : (o.paths ?? []);
        if (files.length === 0) throw new BadQuery(`no episodes of campaign ${id} in ${s.label}`);
        return { paths: files, campaigns: [id], label: `campaign ${id}` };
      };
      const started = performance.now();
      // One report at a time: each exports its campaigns' files to a temporary data set.
      const mine = reports.then(async () => evaluate(await side(campaign), compare ? await side(compare) : undefined, { workDir }));
      reports = mine.catch(() => undefined);
      const evaluation = await mine;
      o.log?.info({ event: "report:served", campaign, compare, ms: Math.round(performance.now() - started) }, "report served");
      res.type("html").set(PAGE_HEADERS).send(reportHtml(evaluation, { inline: false, viewerBase: "/" }));
    }),
  );
  return r;
}
