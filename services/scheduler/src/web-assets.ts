/**
 * The farm's one small front end (fleet page, episode viewer, reports; an operator page can join): shared
 * style and scripts under `src/web/`, uPlot for charts served from node_modules (never a CDN; the pages work
 * offline), one page template, and the page list the header shows.
 *
 *   GET /web/<asset>            farm.css, farm.js, chart.js, screen.js, viewer.js, report.js, fleet-charts.js
 *   GET /web/vendor/<asset>     uPlot.iife.min.js, uPlot.min.css (uplot, MIT)
 *   GET /web/session.json       { login, pages }: whether a log-out button makes sense, which pages to link
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import express, { type Response, type Router } from "express";

const require = createRequire(import.meta.url);

interface Asset {
  file: string;
  type: string;
}

const own = (name: string, type: string): Asset => ({ file: new URL(`./web/${name}`, import.meta.url).pathname, type });

/** Every asset the pages may load, by its path under /web/. */
export const WEB_ASSETS: Readonly<Record<string, Asset>> = Object.freeze({
  "farm.css": own("farm.css", "text/css"),
  "farm.js": own("farm.js", "application/javascript"),
  "chart.js": own("chart.js", "application/javascript"),
  "screen.js": own("screen.js", "application/javascript"),
  "viewer.js": own("viewer.js", "application/javascript"),
  "report.js": own("report.js", "application/javascript"),
  "fleet-charts.js": own("fleet-charts.js", "application/javascript"),
  "operate.js": own("operate.js", "application/javascript"),
  "vendor/uPlot.iife.min.js": { file: require.resolve("uplot/dist/uPlot.iife.min.js"), type: "application/javascript" },
  "vendor/uPlot.min.css": { file: require.resolve("uplot/dist/uPlot.min.css"), type: "text/css" },
});

const cache = new Map<string, string>();
/** An asset's text (read once). */
export function assetText(name: string): string {
  const a = WEB_ASSETS[name];
  if (!a) throw new Error(`no web asset ${name}`);
  let t = cache.get(name);
  if (t === undefined) {
    t = readFileSync(a.file, "utf8");
    cache.set(name, t);
  }
  return t;
}

/** The pages load only their own scripts, styles and images (canvas images come from the same origin). */
export const PAGE_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
export const PAGE_HEADERS = { "content-security-policy": PAGE_CSP, "cache-control": "no-cache", "x-content-type-options": "nosniff" } as const;

export interface PageLink {
  id: string;
  href: string;
  title: string;
}

/** The scheduler's pages, in the header's order. */
export const SCHEDULER_PAGES: readonly PageLink[] = [
  { id: "fleet", href: "/", title: "fleet" },
  { id: "episodes", href: "/view/", title: "episodes" },
  { id: "reports", href: "/report", title: "reports" },
  { id: "operate", href: "/operate", title: "operate" },
  { id: "queue", href: "/ui", title: "queue" },
  { id: "metrics", href: "/metrics", title: "metrics" },
];

export interface WebOptions {
  /** A token guards this server: the header shows a log-out button. */
  login: boolean;
  pages: readonly PageLink[];
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export interface PageSpec {
  title: string;
  /** body data-page, for scripts that serve several pages. */
  page: string;
  /** Assets (names under /web/), styles and scripts, in order. */
  assets: readonly string[];
  /** Extra body content (trusted HTML). */
  body?: string;
  /** Inline every asset (a self-contained file that opens offline, with no server). */
  inline?: boolean;
  /** JSON data for the page, in <script type="application/json" id="page-data">. */
  data?: unknown;
}

/** JSON safe inside a <script> element. */
function scriptJson(v: unknown): string {
  return JSON.stringify(v).replace(/</g, "\\u003c").replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
}

/** One page of the front end: the shared head, a header the scripts fill, a main for the content. */
export function pageHtml(p: PageSpec): string {
  const css = p.assets.filter((a) => a.endsWith(".css"));
  const js = p.assets.filter((a) => a.endsWith(".js"));
  const styles = p.inline ? css.map((a) => `<style>\n${assetText(a)}\n</style>`) : css.map((a) => `<link rel="stylesheet" href="/web/${a}">`);
  // Inline scripts run where they stand: after the body's elements. Linked ones are deferred.
  const scripts = p.inline ? js.map((a) => `<script>\n${assetText(a).replace(/<\/script/gi, "<\\/script")}\n</script>`) : js.map((a) => `<script src="/web/${a}" defer></script>`);
  const data = p.data === undefined ? "" : `<script type="application/json" id="page-data">${scriptJson(p.data)}</script>\n`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(p.title)}</title>
${data}${styles.join("\n")}
${p.inline ? "" : scripts.join("\n")}
</head>
<body data-page="${escapeHtml(p.page)}">
<header id="farm-header"><h1>Android episode farm</h1><span id="updated" class="muted">loading…</span></header>
<main id="content">${p.body ?? ""}</main>
${p.inline ? scripts.join("\n") : ""}
</body>
</html>
`;
}

/** /web/* and /web/session.json. */
export function webAssetRouter(opts: WebOptions): Router {
  const r = express.Router();
  const session = JSON.stringify({ login: opts.login, pages: opts.pages });
  r.get("/web/session.json", (_req, res) => {
    res.type("application/json").set("cache-control", "no-store").send(session);
  });
  const serve = (name: string) => (_req: express.Request, res: Response) => {
    res.type(WEB_ASSETS[name]!.type).set(PAGE_HEADERS).send(assetText(name));
  };
  for (const name of Object.keys(WEB_ASSETS)) r.get(`/web/${name}`, serve(name));
  return r;
}

/** Routes of webAssetRouter for the 405 table and the OpenAPI document. */
export const WEB_ASSET_ROUTES: [string, string][] = [["/web/session.json", "GET, HEAD"], ...Object.keys(WEB_ASSETS).map((n): [string, string] => [`/web/${n}`, "GET, HEAD"])];
