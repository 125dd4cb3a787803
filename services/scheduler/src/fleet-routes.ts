/**
 * The fleet page and what it reads:
 *
 *   GET /                                  the page (plain HTML; polls the two JSON routes every 2 s)
 *   GET /fleet/fleet.js                    its script (style and charts: the shared front end, web-assets.ts)
 *   GET /fleet/series                      the charts' last hour (fleet-series.ts)
 *   GET /devices                           { devices: DeviceBeat[], invalid } from the workers' heartbeats
 *   GET /devices/:worker/:serial/screen    the device's current screen (JPEG thumbnail) from its worker
 *
 * The screen is fetched only from the `screenUrl` of that device's live heartbeat, and only when that
 * URL is http(s) and its path is the worker's screen route for that same serial: the scheduler never
 * fetches a URL a request names. Worker and serial are checked against their patterns first.
 */
import { readFileSync } from "node:fs";
import express, { type Response, type Router } from "express";
import { DEVICE_SERIAL_PATTERN, WORKER_NAME_PATTERN } from "@farm/queue";
import type { Scheduler } from "./scheduler.ts";
import { coerceError } from "@farm/errors";
import type { FleetSampler } from "./fleet-series.ts";
import { PAGE_HEADERS } from "./web-assets.ts";

type SendError = (res: Response, status: number, code: string, message: string) => void;

const MAX_SCREEN_BYTES = 2 * 1024 * 1024;
const SCREEN_TIMEOUT_MS = 10_000;
const asset = (name: string) => readFileSync(new URL(`./fleet-page/${name}`, import.meta.url), "utf8");
export function fleetRoutes(scheduler: Scheduler, sendError: SendError, sampler?: FleetSampler): Router {
  const page = { html: asset("index.html"), js: asset("fleet.js") };
  const r = express.Router();
  const send = (type: string, body: string) => (_req: express.Request, res: Response) => {
    res.type(type).set(PAGE_HEADERS).send(body);
  };
  r.get("/", send("html", page.html));
  // Browsers ask for it on every page (the login form too): no icon, and no 401/404 in their console.
  r.get("/favicon.ico", (_req, res) => {
    res.status(204).end();
  });
  r.get("/fleet/fleet.js", send("application/javascript", page.js));
  r.get("/fleet/series", (_req, res) => {
    if (!sampler) return sendError(res, 404, "NO_SERIES", "this server keeps no chart series");
    res.set("cache-control", "no-store").json(sampler.series());
  });
  r.get("/devices", async (_req, res) => {
    res.set("cache-control", "no-store").json(await scheduler.devices());
  });
  r.get("/devices/:worker/:serial/screen", async (req, res) => {
    const worker = String(req.params.worker);
    const serial = String(req.params.serial);
    if (!WORKER_NAME_PATTERN.test(worker) || !DEVICE_SERIAL_PATTERN.test(serial)) return sendError(res, 400, "BAD_REQUEST", "worker or serial malformed");
    const beat = (await scheduler.devices()).devices.find((d) => d.worker === worker && d.serial === serial);
    if (!beat) return sendError(res, 404, "DEVICE_NOT_FOUND", `no live heartbeat for device ${serial} of worker ${worker}`);
    const url = trustedScreenUrl(beat.screenUrl, serial);
    if (!url) return sendError(res, 404, "SCREEN_UNAVAILABLE", `worker ${worker} does not serve screens (its HTTP server is off, or its heartbeat names no usable screen URL)`);
    let upstream: globalThis.Response;
    try {
      upstream = await fetch(url, { redirect: "error", signal: AbortSignal.timeout(SCREEN_TIMEOUT_MS) });
    } catch (e) {
      return sendError(res, 502, "WORKER_UNREACHABLE", `worker ${worker} at ${url.origin}: ${coerceError(e).message}`);
    }
    const type = upstream.headers.get("content-type") ?? "";
    const body = Buffer.from(await upstream.arrayBuffer());
    // The status only: an upstream body is not passed on to API readers (issue 32, no foreign bodies).
    if (!upstream.ok) return sendError(res, 502, "SCREEN_FAILED", `worker ${worker}: HTTP ${upstream.status} (${body.byteLength} bytes not shown)`);
    if (!/^image\/(jpeg|png)$/.test(type) || body.byteLength > MAX_SCREEN_BYTES) return sendError(res, 502, "SCREEN_FAILED", `worker ${worker} sent ${type || "no type"}, ${body.byteLength} bytes; expected an image under 2 MiB`);
    res.type(type).set("cache-control", "no-store").send(body);
  });
  return r;
}

/** The heartbeat's screen URL when it is http(s) and points at the screen route of this serial. */
function trustedScreenUrl(raw: string | undefined, serial: string): URL | undefined {
  if (!raw) return undefined;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return undefined;
  }
  if (!/^https?:$/.test(u.protocol) || u.username || u.password || u.search || u.hash) return undefined;
  return u.pathname.endsWith(`/devices/${encodeURIComponent(serial)}/screen`) ? u : undefined;
}
