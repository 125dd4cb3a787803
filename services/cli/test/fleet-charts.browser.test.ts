/**
 * The fleet page's charts in Debian's Chromium (playwright-core over the DevTools protocol) against a running farm:
 * a private Redis and adb server, 3 simulated emulators, a worker with its /metrics, the scheduler in token mode
 * sampling its chart series every 500 ms. After a campaign: the charts (uPlot, last hour) show the campaign's
 * episodes and the host's steps; their last point agrees with the worker's /metrics and the campaign in Redis; a
 * click on the busiest point opens that minute's episodes of that campaign in the viewer; the campaign's report is
 * live on the scheduler (test-artifacts/fleet-charts.png). A scheduler without a token shows no log-out button.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { chromium, type BrowserContext } from "playwright-core";
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
const prefix = `{fleetcharts${process.pid}}`;

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

test("the fleet page's charts show the farm's last hour: the last point agrees with /metrics and Redis; a click opens that minute's episodes", async () => {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: run \`bash deploy/bootstrap.sh\` (installs the Debian package chromium)`);
  const client = new HttpCampaignClient(scheduler.http.url, TOKEN);
  const { campaign } = await client.submit({ taskId: "classic_2048", episodes: 9, id: "fleet-charts", policy: "random", baseSeed: 7, options: { maxEpisodeSteps: 15 } });
  await waitFor("the campaign completed", async () => ((await client.status(campaign.id)).state === "completed" ? true : undefined), 180_000);
  const cli = JSON.parse(await farmDevices("--json")) as { devices: DeviceBeat[] };
  browser = await chromium.launchPersistentContext(mkdtempSync(path.join(tmp, "chromium-profile-")), {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync"],
    viewport: { width: 1400, height: 900 },
  });
  const page = browser.pages()[0] ?? (await browser.newPage());
  await page.goto(`${scheduler.http.url}/`);
  await page.fill("input[name=token]", TOKEN);
  await Promise.all([page.waitForURL(`${scheduler.http.url}/`), page.click("button[type=submit]")]);
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
  const [popup] = await Promise.all([browser.waitForEvent("page", { timeout: 30_000 }), page.mouse.move(at.x, at.y).then(() => page.mouse.click(at.x, at.y))]);
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
    const p2 = await browser.newPage();
    await p2.goto(`${open.http.url}/`);
    await p2.waitForSelector("header nav a", { timeout: 30_000 });
    assert.equal(await p2.locator("header form.logout").count(), 0, "no log-out button without a token");
    await p2.close();
  } finally {
    await open.close();
  }
});
