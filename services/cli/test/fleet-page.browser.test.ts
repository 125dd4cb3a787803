/**
 * The fleet page in a real browser against a running farm: a private Redis and adb server, 3 simulated
 * emulators, a worker (WorkerService with its HTTP server) and the scheduler in token mode. Headless
 * Debian `chromium` (deploy/bootstrap.sh installs it), driven with playwright-core, logs in through the
 * form, sees the hosts, devices and the campaign with its progress and outcomes, loads a device's
 * screen from its worker, and saves a screenshot to test-artifacts/fleet-page.png (git-ignored).
 * Then `farm devices --json` and `farm devices` (the real CLI process) must show what the page shows.
 *
 * The fleet page's charts on the same farm, after the same campaign (the scheduler samples its chart series every
 * 500 ms): the charts (uPlot, last hour) show the campaign's episodes and the host's steps; their last point agrees
 * with the worker's /metrics and the campaign in Redis; a click on the busiest point opens that minute's episodes of
 * that campaign in the viewer; the campaign's report is live on the scheduler (test-artifacts/fleet-charts.png). A
 * scheduler without a token shows no log-out button. One farm, one campaign and one browser serve both tests.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { startAdbServer, startRedis, type LocalAdbServer, type LocalRedis } from "@farm/local-services";
import { silentLogger } from "@farm/log";
import { createRedisClient, readDeviceBeats, type DeviceBeat } from "@farm/queue";
import { HttpCampaignClient, loadSchedulerConfig, runScheduler, type RunningScheduler } from "@farm/scheduler";
import { startSimulatedDevices, type SimFleet } from "@farm/simulator";
import { resolveWorkerConfig, WorkerService } from "@farm/worker";

const REPO = path.resolve(import.meta.dirname, "../../..");
const FARM = path.join(REPO, "services/cli/bin/farm.js");
const ARTIFACTS = path.join(REPO, "test-artifacts");
const CHROMIUM = "/usr/bin/chromium";
const TOKEN = "fleet-page-token-0123456789";
const WORKER_NAME = "fleet-test-worker";
const run = promisify(execFile);

let redis: LocalRedis;
let adb: LocalAdbServer;
let sims: SimFleet;
let scheduler: RunningScheduler;
let worker: WorkerService;
let tmp: string;
let browser: BrowserContext | undefined;
const prefix = `{fleet${process.pid}}`;

before(async () => {
  redis = await startRedis();
  adb = await startAdbServer();
  sims = await startSimulatedDevices({ adbPort: adb.port, count: 3 });
  tmp = mkdtempSync(path.join(os.tmpdir(), "farm-fleet-page-"));
  scheduler = await runScheduler(loadSchedulerConfig({ redisUrl: redis.url, prefix, port: 0, token: TOKEN, tasks: [path.join(REPO, "tasks")], tickMs: 200, trajectories: [path.join(tmp, "out")], seriesSampleMs: 500 }, {}), { log: silentLogger });
  const config = resolveWorkerConfig({
    redisUrl: redis.url,
    queuePrefix: prefix,
    adbPort: adb.port,
    taskPaths: [path.join(REPO, "tasks")],
    outDir: path.join(tmp, "out"),
    metricsPort: 0,
    workerName: WORKER_NAME,
    heartbeatMs: 300,
  });
  worker = await WorkerService.create(config, { logger: silentLogger });
  await worker.start();
});

after(async () => {
  await browser?.close().catch(() => undefined);
  await worker?.close();
  await scheduler?.close();
  await sims?.close();
  await adb?.close();
  await redis?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

async function waitFor<T>(what: string, get: () => Promise<T | undefined>, timeoutMs = 90_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await get();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const farmDevices = async (...extra: string[]) =>
  (await run(process.execPath, [FARM, "devices", "--redis", redis.url, "--prefix", prefix, ...extra], { cwd: REPO, timeout: 60_000 })).stdout;

/**
 * The campaign both tests look at: 9 episodes of 2048 on the 3 devices, submitted once; while it runs, a heartbeat of a
 * busy device. Long enough (50 steps an episode, ~2 s a device) that the charts' 500 ms samples catch heartbeats of busy
 * devices: with 15 steps it could end between two samples on a fast run, and steps/s never showed.
 */
let campaignDone: Promise<{ campaign: { id: string }; client: HttpCampaignClient; busySeen: DeviceBeat | undefined }> | undefined;
function finishedCampaign() {
  campaignDone ??= (async () => {
    const client = new HttpCampaignClient(scheduler.http.url, TOKEN);
    const { campaign } = await client.submit({ taskId: "classic_2048", episodes: 9, id: "fleet-page", policy: "random", baseSeed: 7, options: { maxEpisodeSteps: 50 } });
    // While it runs, heartbeats show busy devices on its episodes and steps.
    const beats = createRedisClient(redis.url);
    let busySeen: DeviceBeat | undefined;
    try {
      await waitFor("the campaign completed", async () => {
        busySeen ??= (await readDeviceBeats(beats, prefix)).devices.find((d) => d.state === "busy" && d.campaignId === campaign.id && d.step !== undefined && d.episodeIndex !== undefined);
        return (await client.status(campaign.id)).state === "completed" ? true : undefined;
      }, 180_000);
    } finally {
      await beats.quit();
    }
    return { campaign, client, busySeen };
  })();
  return campaignDone;
}

/** The one browser of the file (a fresh profile: the first page to open the fleet page meets the login form). */
async function openBrowser(): Promise<BrowserContext> {
  // A missing browser is a failure, not a skip: CI must run these tests.
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: run \`bash deploy/bootstrap.sh\` (installs the Debian package chromium)`);
  browser ??= await chromium.launchPersistentContext(mkdtempSync(path.join(tmp, "chromium-profile-")), {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync"],
    viewport: { width: 1400, height: 900 },
  });
  return browser;
}

/** A page on the fleet page, through the login form when the browser has not logged in yet. */
async function fleetPage(b: BrowserContext): Promise<Page> {
  const page = b.pages().find((p) => p.url() === "about:blank") ?? (await b.newPage());
  await page.goto(`${scheduler.http.url}/`);
  if (new URL(page.url()).pathname === "/login") {
    await page.fill("input[name=token]", TOKEN);
    await Promise.all([page.waitForURL(`${scheduler.http.url}/`), page.click("button[type=submit]")]);
  }
  return page;
}

test("the fleet page shows the devices and the campaign, in a real browser; farm devices matches it", async () => {
  const serials = sims.devices.map((d) => d.serial).sort();
  const b = await openBrowser();
  const { campaign, busySeen } = await finishedCampaign();
  assert.ok(busySeen, "a heartbeat showed a busy device with the campaign, episode and step");
  assert.equal(busySeen.taskId, "classic_2048");
  // Every device has a heartbeat, is ready, and has run episodes.
  await waitFor("ready heartbeats of every device", async () => {
    const out = JSON.parse(await farmDevices("--json")) as { devices: DeviceBeat[] };
    return out.devices.length === serials.length && out.devices.every((d) => d.state === "ready") ? true : undefined;
  });

  const page = await b.newPage();
  const consoleErrors: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") consoleErrors.push(m.text());
  });
  // Not logged in (this file's first look at the page): the page sends the browser to the login form, which brings it back.
  await page.goto(`${scheduler.http.url}/`);
  assert.match(page.url(), /\/login\?next=%2F$/);
  await page.fill("input[name=token]", TOKEN);
  await Promise.all([page.waitForURL(`${scheduler.http.url}/`), page.click("button[type=submit]")]);

  // Hosts and their devices, with state; the campaign with its progress and outcome breakdown.
  for (const s of serials) await page.waitForSelector(`tr[data-serial="${s}"][data-state="ready"]`, { timeout: 30_000 });
  assert.equal(await page.locator("h3[data-host]").count(), 1, "one host, one worker");
  assert.match((await page.locator("h3[data-host]").textContent()) ?? "", new RegExp(`worker ${WORKER_NAME}`));
  const row = page.locator(`tr[data-campaign="${campaign.id}"]`);
  await row.waitFor({ timeout: 30_000 });
  assert.equal(await row.getAttribute("data-state"), "completed");
  const rowText = (await row.textContent()) ?? "";
  assert.match(rowText, /9\/9/);
  assert.match(rowText, /truncated 9|terminated \d/, "outcome breakdown");
  assert.ok((await row.locator(".bar .done").evaluate((e) => (e as HTMLElement).style.width)) === "100%", "a full progress bar");

  // A device's screen, on demand, fetched by the scheduler from its worker.
  await page.click(`button[data-screen="${WORKER_NAME}/${serials[0]}"]`);
  const img = page.locator(`tr[data-serial="${serials[0]}"] img.screen`);
  await img.waitFor({ timeout: 30_000 });
  await page.waitForFunction((sel) => {
    const i = document.querySelector(sel) as HTMLImageElement | null;
    return !!i && i.complete && i.naturalWidth > 0;
  }, `tr[data-serial="${serials[0]}"] img.screen`, { timeout: 30_000 });
  assert.ok((await img.evaluate((i) => (i as HTMLImageElement).naturalWidth)) <= 320, "a thumbnail");

  mkdirSync(ARTIFACTS, { recursive: true });
  const shot = path.join(ARTIFACTS, "fleet-page.png");
  await page.screenshot({ path: shot, fullPage: true });
  assert.ok(statSync(shot).size > 10_000, `screenshot saved to ${shot}`);
  console.log(`fleet page screenshot: ${shot}`);

  // farm devices (JSON and table) shows the same devices, states and transports as the page.
  const pageRows = await page.locator("tr[data-device]").evaluateAll((rows) =>
    rows.map((r) => ({ key: r.getAttribute("data-device"), state: r.getAttribute("data-state"), cells: [...r.querySelectorAll("td")].map((td) => td.textContent ?? "") })),
  );
  const cli = JSON.parse(await farmDevices("--json")) as { devices: DeviceBeat[] };
  assert.deepEqual(
    pageRows.map((r) => [r.key, r.state, r.cells[2], r.cells[5]]).sort(),
    cli.devices.map((d) => [`${d.worker}/${d.serial}`, d.state, d.transport, String(d.relaunches)]).sort(),
  );
  const table = await farmDevices();
  for (const s of serials) assert.match(table, new RegExp(`^${WORKER_NAME}\\s+${s}\\s+\\S+\\s+(adb|grpc)\\s+ready\\b`, "m"), table);
  assert.deepEqual(consoleErrors, [], "no errors in the page's console");
  // Heartbeats count the episodes each device ran: together at least the campaign's (a retried attempt counts too).
  assert.ok(cli.devices.reduce((n, d) => n + d.episodesDone, 0) >= 9);
});

test("the fleet page's charts show the farm's last hour: the last point agrees with /metrics and Redis; a click opens that minute's episodes", async () => {
  const b = await openBrowser();
  const { campaign, client } = await finishedCampaign();
  // Heartbeats settle a beat after the campaign completes: every device ready again.
  const cli = await waitFor("ready heartbeats of every device", async () => {
    const out = JSON.parse(await farmDevices("--json")) as { devices: DeviceBeat[] };
    return out.devices.length === sims.devices.length && out.devices.every((d) => d.state === "ready") ? out : undefined;
  });
  const page = await fleetPage(b);
  mkdirSync(ARTIFACTS, { recursive: true });

  // The charts: points over the run, the last one agreeing with the worker's /metrics and the campaign in Redis.
  assert.equal(await page.locator("header form.logout").count(), 1, "token mode: a log-out button");
  const afterDone = Date.now();
  await page.waitForFunction((t) => Number(document.getElementById("charts")?.getAttribute("data-last-t")) > t, afterDone, { timeout: 30_000 });
  const series = (await page.evaluate(() => (window as unknown as { FarmFleetSeries: unknown }).FarmFleetSeries)) as {
    t: number[];
    campaigns: Record<string, { finished: number[]; episodesPerSec: (number | null)[]; stepsPerSec: number[]; startLatencySec: (number | null)[] }>;
    hosts: Record<string, { episodesDone: number[]; stepsPerSec: number[] }>;
  };
  const metricsText = await (await fetch(`${worker.metricsUrl}/metrics`)).text();
  const episodesTotal = metricsText.split("\n").filter((l) => l.startsWith("farm_episodes_total{")).reduce((n, l) => n + Number(l.split(" ").at(-1)), 0);
  const mine = series.campaigns[campaign.id]!;
  assert.ok(series.t.length >= 4, `${series.t.length} points`);
  assert.equal(mine.finished.at(-1), episodesTotal, "the chart's last count of finished episodes is the worker's farm_episodes_total");
  assert.equal(mine.finished.at(-1), (await client.status(campaign.id)).finished, "… and the campaign's in Redis");
  assert.ok(mine.episodesPerSec.some((v) => (v ?? 0) > 0), "episodes/s rose during the run");
  assert.ok(mine.startLatencySec.some((v) => v !== null), "start latencies were sampled");
  const host = Object.keys(series.hosts)[0]!;
  assert.equal(series.hosts[host]!.episodesDone.at(-1), cli.devices.reduce((n, d) => n + d.episodesDone, 0), "the host's episodes done: its heartbeats' sum");
  assert.ok(series.hosts[host]!.stepsPerSec.some((v) => v > 0), "steps/s rose during the run");
  const nowText = (await page.locator('[data-chart="campaign-episodes"] [data-now]').textContent()) ?? "";
  assert.match(nowText, new RegExp(`finished ${campaign.id} ${episodesTotal}`), nowText);
  await page.locator("#charts").screenshot({ path: path.join(ARTIFACTS, "fleet-charts.png") });

  // A click on the busiest point of the campaign's line opens that minute's episodes in the viewer.
  const rates = mine.episodesPerSec.map((v) => v ?? 0);
  const peak = rates.indexOf(Math.max(...rates));
  const at = await page.evaluate(
    ([i]) => {
      const c = (window as unknown as { FarmCharts: Record<string, { plot(): { data: number[][]; valToPos(v: number, s: string): number; over: HTMLElement } }> }).FarmCharts["campaign-episodes"]!.plot();
      const r = c.over.getBoundingClientRect();
      return { x: r.left + c.valToPos(c.data[0]![i!]!, "x"), y: r.top + c.valToPos(c.data[1]![i!]!, "y") };
    },
    [peak],
  );
  const [popup] = await Promise.all([b.waitForEvent("page", { timeout: 30_000 }), page.mouse.move(at.x, at.y).then(() => page.mouse.click(at.x, at.y))]);
  await popup.waitForLoadState();
  const u = new URL(popup.url());
  assert.equal(u.pathname, "/view/");
  assert.equal(Number(u.searchParams.get("to")) - Number(u.searchParams.get("from")), 60_000, "one minute");
  assert.equal(u.searchParams.get("campaign"), campaign.id, "of the campaign under the pointer");
  await popup.waitForSelector("#count, #load-error", { timeout: 30_000 });
  assert.ok((await popup.locator("tr[data-episode]").count()) > 0, `episodes of that minute in the viewer: ${popup.url()}: ${await popup.locator("main").textContent()}`);
  for (const id of await popup.locator("tr[data-episode]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-episode")))) assert.ok(id!.startsWith(`${campaign.id}-`));
  await popup.close();

  // The same campaign's report, live on the scheduler (its workers' Avro files through the report's SQL).
  await page.goto(`${scheduler.http.url}/report?campaign=${campaign.id}`);
  const reportRow = page.locator(`#base-tasks tr[data-campaign="${campaign.id}"][data-task="classic_2048"]`);
  await reportRow.waitFor({ timeout: 60_000 });
  assert.equal(Number(await reportRow.getAttribute("data-episodes")), 9);
  assert.equal(await page.locator("header form.logout").count(), 1);

  // Without a token the same page has no log-out button.
  const open = await runScheduler(loadSchedulerConfig({ redisUrl: redis.url, prefix, port: 0, tasks: [path.join(REPO, "tasks")] }, {}), { log: silentLogger });
  try {
    const p2 = await b.newPage();
    await p2.goto(`${open.http.url}/`);
    await p2.waitForSelector("header nav a", { timeout: 30_000 });
    assert.equal(await p2.locator("header form.logout").count(), 0, "no log-out button without a token");
    await p2.close();
  } finally {
    await open.close();
  }
});
