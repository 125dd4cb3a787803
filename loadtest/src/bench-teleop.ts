/**
 * `farm bench teleop [--actions 20] [--seconds 4]`: a person's view of a farm device in the browser (issue 37), at
 * the simulator's `instant` and `emulator-grpc` latency profiles, one simulated emulator each (in a child process),
 * a local farm (Redis, worker, scheduler with its operator page) and headless Debian `chromium` with the page open
 * (playwright-core over the DevTools protocol), logged in as an operator:
 *   fps, frame latency: a `human` episode of catch_the_ball (the ball falls on its own, so the screen changes all
 *     the time at `instant`; at `emulator-grpc` the simulated game stands still without touches, so fps is 0 there)
 *     is watched for `--seconds`: frames painted per second (bounded by how often the screen changes: frames are
 *     sent on change only). Each frame's latency, over both phases, from the worker's capture (the screenshot
 *     returned) to the browser's paint (the requestAnimationFrame after its decode); both clocks are this machine's.
 *   action_to_frame: a `human` episode of todo_note_create (a still screen) is driven with `--actions` clicks:
 *     NEW NOTE on the screen when the list shows, else the page's Back button (it hides the keyboard, then leaves
 *     the editor): from the page's click to the paint of the first frame captured after it (on a still screen,
 *     the first frame that shows the click's effect).
 * The path measured: device screenshot (gRPC or adb) → JPEG (sharp, ≤ 720 px) → Redis PUBLISH → scheduler →
 * Server-Sent Event → the browser's decode and paint; the click: POST → Redis → worker → the device.
 * Lines: `instant: fps=… …`, then last `fps=<n> frame_latency_p50_ms=<n> frame_latency_p99_ms=<n> action_to_frame_p50_ms=<n>` (emulator-grpc).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { createLogger } from "@farm/log";
import { startLocalFarm, type LocalFarm } from "@farm/local-farm";
import { HttpCampaignClient } from "@farm/scheduler";
import { pollUntil, sleep } from "@farm/time";
import { intOpt } from "./options.ts";
import type { BenchOptions, Scenario } from "./scenario.ts";
import { benchLogLevel } from "./settings.ts";
import { simChildDevices } from "./sim-child.ts";
import { quantiles } from "./stats.ts";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const CHROMIUM = "/usr/bin/chromium";
const ADMIN = "bench-teleop-admin-token-0123456789";
const OPERATOR = "bench-teleop-operator-token-0123456789";

interface Figures {
  fps: number;
  frameP50: number;
  frameP99: number;
  actionP50: number;
  frames: number;
  actions: number;
}

interface OperateStats {
  view?: { step: number; screen: { width: number; height: number }; elements?: { resource_id: string; bounds: number[] }[] };
  paints: { seq: number; at: number; painted: number }[];
  actions: { sentAt: number; firstFrameAt?: number }[];
}
const statsOf = (page: Page) => page.evaluate(() => (window as unknown as { __operate: OperateStats }).__operate);

async function takeEpisode(page: Page, api: string, episodeId: string): Promise<void> {
  await page.goto(`${api}/operate`);
  await page.locator(`button[data-take="${episodeId}"]`).click({ timeout: 30_000 });
  await page.waitForSelector('body[data-mode="drive"][data-frames]', { timeout: 30_000 });
}

async function measure(profile: "instant" | "emulator-grpc", o: { actions: number; seconds: number }, out: (line: string) => void): Promise<Figures> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "farm-bench-teleop-"));
  let farm: LocalFarm | undefined;
  let browser: BrowserContext | undefined;
  try {
    farm = await startLocalFarm({
      devices: simChildDevices(1, profile),
      taskPaths: [path.join(REPO, "tasks/catch_the_ball.textproto"), path.join(REPO, "tasks/families/todo_note_create.family.yaml")],
      outDir: path.join(tmp, "out"),
      queuePrefix: "{teleop}",
      logger: createLogger({ service: "bench-teleop", level: benchLogLevel() }),
      environment: {},
      worker: { episode: { settleMs: 20 } },
      bindTimeoutMs: 60_000,
      scheduler: { http: true, tickMs: 100, token: ADMIN, operatorTokens: `bench:${OPERATOR}` },
    });
    const api = farm.schedulerService!.http.url;
    const client = new HttpCampaignClient(api, ADMIN);
    browser = await chromium.launchPersistentContext(fs.mkdtempSync(path.join(tmp, "chromium-")), {
      executablePath: CHROMIUM,
      headless: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync"],
      viewport: { width: 1200, height: 900 },
    });
    const page = browser.pages()[0] ?? (await browser.newPage());
    await page.goto(`${api}/login?next=%2Foperate`);
    await page.fill("input[name=token]", OPERATOR);
    await Promise.all([page.waitForURL(`${api}/operate`), page.click("button[type=submit]")]);

    // 1. A moving screen: frames per second and capture → paint.
    const moving = await client.submit({ taskId: "catch_the_ball", episodes: 1, id: "teleop-fps", policy: "human", options: { maxEpisodeSec: 600, operator: { graceSec: 5, idleSec: 600, onAbandon: "record" } } });
    await takeEpisode(page, api, `${moving.campaign.id}-0`);
    await sleep(1000); // warm: the first frames, the JIT
    const before = (await statsOf(page)).paints.length;
    const t0 = Date.now();
    await sleep(o.seconds * 1000);
    const paints = (await statsOf(page)).paints.slice(before);
    const wallSec = (Date.now() - t0) / 1000;
    await page.click("#op-leave");
    await pollUntil(async () => ((await client.status(moving.campaign.id)).state === "running" ? undefined : true), { timeoutMs: 30_000, intervalMs: 100 });

    // 2. A still screen: click → the first frame captured after it, painted.
    const still = await client.submit({ taskId: "todo_note_create", episodes: 1, id: "teleop-actions", policy: "human", options: { operator: { graceSec: 5, idleSec: 600, onAbandon: "record" } } });
    await takeEpisode(page, api, `${still.campaign.id}-0`);
    const box = (await page.locator("#screen").boundingBox())!;
    for (let i = 0; i < o.actions; i++) {
      const s = await statsOf(page);
      const step = s.view!.step;
      await sleep(150); // let the screen settle: every frame after the click is the click's
      // NEW NOTE on the list, else Back (it hides the keyboard, then leaves the editor): each changes the screen.
      const e = s.view!.elements?.find((x) => x.resource_id.endsWith(":id/new_note"));
      if (e) {
        const [l, t, r, b] = e.bounds as [number, number, number, number];
        await page.mouse.click(box.x + (((l + r) / 2) / s.view!.screen.width) * box.width, box.y + (((t + b) / 2) / s.view!.screen.height) * box.height);
      } else await page.click("#op-back");
      await page.waitForSelector(`body[data-step="${step + 1}"]`, { timeout: 20_000 });
      await pollUntil(async () => ((await statsOf(page)).actions.at(-1)?.firstFrameAt !== undefined ? true : undefined), { timeoutMs: 10_000, intervalMs: 10 });
    }
    const last = await statsOf(page);
    const actions = last.actions.filter((a) => a.firstFrameAt !== undefined).map((a) => a.firstFrameAt! - a.sentAt);
    await page.click("#op-leave");

    // Capture → paint over every frame of both phases (a still screen's frames are the clicks' effects).
    const lat = quantiles([...paints, ...last.paints].map((p) => p.painted - p.at));
    const act = quantiles(actions);
    out(`${profile}: ${paints.length} frames in ${wallSec.toFixed(1)} s; capture → paint p50 ${lat.p50.toFixed(1)} ms, p90 ${lat.p90.toFixed(1)}, p99 ${lat.p99.toFixed(1)}, max ${lat.max.toFixed(1)}; click → first frame of its effect p50 ${act.p50.toFixed(1)} ms, p90 ${act.p90.toFixed(1)} (${act.n} clicks)`);
    return { fps: paints.length / wallSec, frameP50: lat.p50, frameP99: lat.p99, actionP50: act.p50, frames: paints.length, actions: act.n };
  } finally {
    await browser?.close().catch(() => undefined);
    await farm?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

const line = (f: Figures) => `fps=${f.fps.toFixed(1)} frame_latency_p50_ms=${f.frameP50.toFixed(1)} frame_latency_p99_ms=${f.frameP99.toFixed(1)} action_to_frame_p50_ms=${f.actionP50.toFixed(1)}`;

export const scenario: Scenario = {
  async run(opts: BenchOptions): Promise<void> {
    if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run \`bash deploy/bootstrap.sh\` (installs the Debian package chromium)`);
    const o = { actions: intOpt(opts, "actions", 20), seconds: intOpt(opts, "seconds", 4) };
    console.log("teleop: one simulated emulator's screen in headless Chromium through the operator page (worker → Redis → scheduler → SSE), per latency profile");
    const only = typeof opts.profile === "string" ? opts.profile : undefined;
    if (only !== undefined && only !== "instant" && only !== "emulator-grpc") throw new Error(`--profile: instant or emulator-grpc, got ${only}`);
    const instant = only === "emulator-grpc" ? undefined : await measure("instant", o, (l) => console.log(l));
    const grpc = only === "instant" ? undefined : await measure("emulator-grpc", o, (l) => console.log(l));
    if (instant) console.log(`${grpc ? "instant: " : ""}${line(instant)}`);
    if (grpc) console.log(line(grpc));
  },
};
