/**
 * The fleet page in a real browser against a running farm: a private Redis and adb server, 3 simulated
 * emulators, a worker (WorkerService with its HTTP server) and the scheduler in token mode. Headless
 * Debian `chromium` (deploy/bootstrap.sh installs it), driven with playwright-core, logs in through the
 * form, sees the hosts, devices and the campaign with its progress and outcomes, loads a device's
 * screen from its worker, and saves a screenshot to test-artifacts/fleet-page.png (git-ignored).
 * Then `farm devices --json` and `farm devices` (the real CLI process) must show what the page shows.
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
const prefix = `{fleet${process.pid}}`;

before(async () => {
  redis = await startRedis();
  adb = await startAdbServer();
  sims = await startSimulatedDevices({ adbPort: adb.port, count: 3 });
  tmp = mkdtempSync(path.join(os.tmpdir(), "farm-fleet-page-"));
  scheduler = await runScheduler(loadSchedulerConfig({ redisUrl: redis.url, prefix, port: 0, token: TOKEN, tasks: [path.join(REPO, "tasks")], tickMs: 200 }, {}), { log: silentLogger });
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

test("the fleet page shows the devices and the campaign, in a real browser; farm devices matches it", async () => {
  // A missing browser is a failure, not a skip: CI must run this test.
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: run \`bash deploy/bootstrap.sh\` (installs the Debian package chromium)`);
  const serials = sims.devices.map((d) => d.serial).sort();
  const client = new HttpCampaignClient(scheduler.http.url, TOKEN);
  const { campaign } = await client.submit({ taskId: "classic_2048", episodes: 9, id: "fleet-page", policy: "random", baseSeed: 7, options: { maxEpisodeSteps: 15 } });
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
  assert.ok(busySeen, "a heartbeat showed a busy device with the campaign, episode and step");
  assert.equal(busySeen.taskId, "classic_2048");
  // Every device has a heartbeat, is ready, and has run episodes.
  await waitFor("ready heartbeats of every device", async () => {
    const out = JSON.parse(await farmDevices("--json")) as { devices: DeviceBeat[] };
    return out.devices.length === serials.length && out.devices.every((d) => d.state === "ready") ? true : undefined;
  });

  browser = await chromium.launchPersistentContext(mkdtempSync(path.join(tmp, "chromium-profile-")), {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync"],
    viewport: { width: 1400, height: 900 },
  });
  const page = browser.pages()[0] ?? (await browser.newPage());
  const consoleErrors: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") consoleErrors.push(m.text());
  });
  // Not logged in: the page sends the browser to the login form, which brings it back.
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
