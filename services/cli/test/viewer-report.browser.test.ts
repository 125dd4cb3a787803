/**
 * The episode viewer and `farm report` in Debian's Chromium (playwright-core over the DevTools protocol):
 *
 * - an agent campaign: `farm run --sim todo_create_note --policy llm` against the OpenAI-compatible stand-in (its
 *   first answer nonsense, recorded invalid; then it solves by element text), observing pixels and a11y; a second
 *   campaign of another policy (a scripted one that gives up at once);
 * - `farm trajectories view` on the Avro folder: the page steps through an episode by keyboard; every drawn tap lies
 *   in the box of the element the action names, and the tap's canvas pixel is the marker's colour; the element
 *   list equals the recorded one of that screen; the rewards shown equal the trajectory's; `#step=N` opens at N;
 * - `farm report` on the exported data set of both campaigns writes one HTML file that opens offline (every
 *   network request refused) with rates and Wilson intervals equal to DuckDB's counts (`queryDataset`, what
 *   `farm trajectories query` runs) and the interval formula; the compare section names the task that differs.
 * Screenshots: test-artifacts/viewer.png, viewer-elements.png, report.png.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { exportParquet, queryDataset } from "@farm/dataset";
import { startLlmStandIn, type LlmStandIn } from "@farm/local-services";
import { readTrajectories, type StoredEpisode } from "@farm/trajectory";
import { REPO } from "./fixtures.ts";

const FARM = path.join(REPO, "services/cli/bin/farm.js");
const ARTIFACTS = path.join(REPO, "test-artifacts");
const CHROMIUM = "/usr/bin/chromium";
const TASK = path.join(REPO, "tasks", "todo_create_note.textproto");
const KEY = "sk-viewer-test-5e2a";
const run = promisify(execFile);

let llm: LlmStandIn;
let tmp: string;
let browser: BrowserContext | undefined;
let viewer: ChildProcess | undefined;
let viewerUrl = "";
const agentOut = () => path.join(tmp, "agent");
const giveUpOut = () => path.join(tmp, "give-up");

const farm = async (args: string[], env: Record<string, string> = {}) =>
  (await run(process.execPath, [FARM, ...args], { cwd: REPO, timeout: 240_000, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, FARM_LOG_LEVEL: "warn", ...env } })).stdout;

async function episodesOf(dir: string): Promise<StoredEpisode[]> {
  const out: StoredEpisode[] = [];
  for await (const e of readTrajectories(dir)) out.push(e);
  return out.sort((a, b) => a.episodeIndex - b.episodeIndex);
}

before(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), "farm-viewer-"));
  llm = await startLlmStandIn({
    apiKey: KEY,
    // Three answers without an action: the policy asks again twice (its invalidRetries), then records one invalid step.
    script: [{ text: "I am not sure what to do here." }, { text: "Still unsure." }, { text: "No idea." }],
    solver: [{ click_text: "NEW NOTE" }, { type_into: "title_input", text: "milk" }, { type_into: "body_input", text: "2 litres" }, { click_text: "SAVE" }],
  });
  const giveUp = path.join(tmp, "give-up.ui.jsonl");
  writeFileSync(giveUp, `${JSON.stringify({ action_type: "status", goal_status: "infeasible" })}\n`);
  await Promise.all([
    farm(["run", TASK, "--episodes", "2", "--sim", "--settle-ms", "20", "--policy", "llm", "--llm-endpoint", llm.endpoint, "--llm-model", "stand-in", "--llm-screenshot-max-side", "128", "--observe", "pixels,a11y", "--out", agentOut()], { FARM_LLM_API_KEY: KEY }),
    farm(["run", TASK, "--episodes", "5", "--sim", "--settle-ms", "20", "--seed", "100", "--policy", `scripted:${giveUp}`, "--observe", "a11y", "--out", giveUpOut()]),
  ]);
});

after(async () => {
  await browser?.close().catch(() => undefined);
  if (viewer && viewer.exitCode === null) {
    viewer.kill("SIGTERM");
    await new Promise((r) => viewer!.once("exit", r));
  }
  await llm?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

async function openBrowser(): Promise<BrowserContext> {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: run \`bash deploy/bootstrap.sh\` (installs the Debian package chromium)`);
  browser ??= await chromium.launchPersistentContext(mkdtempSync(path.join(tmp, "chromium-profile-")), {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync"],
    viewport: { width: 1300, height: 1000 },
  });
  return browser;
}

function startViewer(paths: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    viewer = spawn(process.execPath, [FARM, "trajectories", "view", ...paths, "--port", "0"], { cwd: REPO, env: { ...process.env, FARM_LOG_LEVEL: "warn" } });
    let out = "";
    let err = "";
    const t = setTimeout(() => reject(new Error(`the viewer printed no URL in 120 s: ${out}\n${err}`)), 120_000);
    viewer.stderr!.on("data", (b) => (err += b));
    viewer.stdout!.on("data", (b) => {
      out += b;
      const m = /episode viewer: (http:\/\/127\.0\.0\.1:\d+\/)view\//.exec(out);
      if (m) {
        clearTimeout(t);
        resolve(m[1]!);
      }
    });
    viewer.once("exit", (code) => reject(new Error(`the viewer exited (${code}): ${err}`)));
  });
}

const elementsOfScreen = (e: StoredEpisode, screen: number) => (screen === 0 ? e.initialA11y : e.steps[screen - 1]!.a11y)?.elements ?? [];

async function canvasState(page: Page) {
  return page.locator("#screen").evaluate((c) => {
    const d = (c as HTMLCanvasElement).dataset;
    const [cx, cy] = (d.canvasTap || "").split(",").map(Number);
    let pixel: number[] | null = null;
    if (d.canvasTap) pixel = [...(c as HTMLCanvasElement).getContext("2d")!.getImageData(cx!, cy!, 1, 1).data];
    return { step: Number(d.step), tap: d.tap || "", box: d.box || "", element: d.element || "", pixel };
  });
}

test("the viewer steps through an agent episode: taps on the named element, the recorded element list, the trajectory's rewards", async () => {
  const episodes = await episodesOf(agentOut());
  assert.equal(episodes.length, 2);
  const ep = episodes[0]!;
  assert.equal(ep.totalReward, 1, "the stand-in solved the task");
  assert.ok(ep.steps.some((s) => s.ui?.invalid), "the first answer was recorded invalid");
  viewerUrl = await startViewer([agentOut(), giveUpOut()]);
  const page = (await openBrowser()).pages()[0] ?? (await browser!.newPage());
  const consoleErrors: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") consoleErrors.push(m.text());
  });
  page.on("pageerror", (e) => consoleErrors.push(e.message));

  // The list, filtered by campaign; a row opens the episode.
  await page.goto(`${viewerUrl}view/?campaign=${encodeURIComponent(ep.campaignId)}`);
  await page.waitForSelector(`tr[data-episode="${ep.episodeId}"]`, { timeout: 30_000 });
  assert.equal(await page.locator("tr[data-episode]").count(), 2);
  assert.equal(await page.locator("header form.logout").count(), 0, "no log-out button without a login");
  await Promise.all([page.waitForURL(/\/view\/episode\?id=/), page.click(`tr[data-episode="${ep.episodeId}"] a`)]);
  await page.waitForSelector("#screen[data-ready='1']", { timeout: 30_000 });
  assert.equal(Number(await page.locator("#total-reward").getAttribute("data-reward")), ep.totalReward, "the total reward shown is the trajectory's");
  assert.equal((await page.locator("[data-field=goal] td").textContent())?.trim(), ep.goal);

  let taps = 0;
  let running = 0;
  for (let n = 1; n <= ep.steps.length; n++) {
    if (n > 1) await page.keyboard.press("ArrowRight");
    await page.waitForSelector(`#screen[data-ready='${n}']`, { timeout: 30_000 });
    const step = ep.steps[n - 1]!;
    running += step.reward;
    assert.equal(Number(await page.locator("#step-reward").getAttribute("data-reward")), step.reward, `step ${n}'s reward`);
    assert.equal(Number(await page.locator("#running-reward").getAttribute("data-reward")), running, `the total after step ${n}`);
    assert.equal(new URL(page.url()).hash, `#step=${n}`);
    // The element list is the recorded one of the screen the action was chosen on.
    const recorded = elementsOfScreen(ep, n - 1);
    const shown = await page.locator("table.elements tbody tr").evaluateAll((rows) => rows.map((r) => ({ index: Number(r.getAttribute("data-index")), bounds: r.getAttribute("data-bounds"), text: r.children[2]!.textContent })));
    assert.deepEqual(
      shown,
      recorded.map((e) => ({ index: e.index, bounds: e.bounds.join(","), text: e.text })),
      `step ${n}: the element list`,
    );
    const c = await canvasState(page);
    if (step.ui?.invalid) {
      assert.match((await page.locator("#invalid").textContent()) ?? "", /.+/, `step ${n} is marked invalid`);
      assert.equal(await page.locator(`#steps-strip a[data-step="${n}"].invalid`).count(), 1);
      assert.equal(c.tap, "", "nothing drawn for an invalid answer");
      continue;
    }
    const r = step.ui?.resolved;
    if (r && (r.op === "tap" || r.op === "type") && r.element !== undefined) {
      const named = recorded[r.element]!;
      assert.equal(c.element, String(r.element));
      assert.equal(c.box, named.bounds.join(","), "the box drawn is the named element's");
      const [x, y] = c.tap.split(",").map(Number) as [number, number];
      const [l, t, rr, b] = named.bounds;
      assert.ok(x >= l && x <= rr && y >= t && y <= b, `step ${n}: tap (${x}, ${y}) lies in element ${r.element} [${named.bounds.join(", ")}]`);
      assert.deepEqual(c.pixel!.slice(0, 3), [255, 0, 255], "the tap's marker is drawn at that point");
      assert.equal(await page.locator(`table.elements tr.named[data-index="${r.element}"]`).count(), 1, "the named element is marked in the list");
      taps++;
    }
  }
  assert.ok(taps >= 2, `${taps} taps checked`);
  // The final screen, then Home; element boxes on request; a step link opens at its step.
  await page.keyboard.press("ArrowRight");
  await page.waitForSelector(`#screen[data-ready='${ep.steps.length + 1}']`);
  await page.keyboard.press("Home");
  await page.waitForSelector("#screen[data-ready='1']");
  const tapStep = ep.steps.findIndex((s) => s.ui?.resolved?.op === "tap") + 1;
  await page.goto(`${viewerUrl}view/episode?id=${encodeURIComponent(ep.episodeId)}#step=${tapStep}`);
  await page.waitForSelector(`#screen[data-ready='${tapStep}']`, { timeout: 30_000 });
  assert.match((await page.locator("#step-counter").textContent()) ?? "", new RegExp(`step ${tapStep} of ${ep.steps.length}`));
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, "viewer.png"), fullPage: true });
  await page.keyboard.press("e");
  await page.waitForFunction(() => (document.getElementById("show-elements") as HTMLInputElement).checked);
  await page.waitForSelector(`#screen[data-ready='${tapStep}']`);
  await page.locator(".player").screenshot({ path: path.join(ARTIFACTS, "viewer-elements.png") });
  assert.ok(statSync(path.join(ARTIFACTS, "viewer.png")).size > 20_000);
  // The model's text of the invalid step is shown as given.
  const invalidStep = ep.steps.findIndex((s) => s.ui?.invalid) + 1;
  await page.goto(`${viewerUrl}view/episode?id=${encodeURIComponent(ep.episodeId)}#step=${invalidStep}`);
  await page.waitForSelector(`#screen[data-ready='${invalidStep}']`, { timeout: 30_000 });
  assert.equal(await page.locator("#given").textContent(), ep.steps[invalidStep - 1]!.ui!.given);
  assert.deepEqual(consoleErrors, [], "no errors in the page's console");
});

test("farm report on a data set of two campaigns: one offline HTML file, rates and Wilson intervals equal DuckDB's, the differing task named", async () => {
  const agent = (await episodesOf(agentOut()))[0]!.campaignId;
  const giveUp = (await episodesOf(giveUpOut()))[0]!.campaignId;
  const ds = path.join(tmp, "dataset");
  await exportParquet([agentOut(), giveUpOut()], ds); // what `farm trajectories export --format parquet` runs
  const out = path.join(tmp, "report.html");
  const printed = await farm(["report", ds, "--campaign", giveUp, "--compare", agent, "--out", out]);
  assert.match(printed, /differs beyond noise/);
  const html = readFileSync(out, "utf8");
  assert.ok(!/<script[^>]+src=|<link[^>]+href=/.test(html), "no external script or style");

  // What a user gets from DuckDB: n and k per campaign and task; the Wilson interval from its formula.
  const query = "SELECT campaign_id, task_id, count(*) AS n, sum(CASE WHEN episode_return > 0 THEN 1 ELSE 0 END) AS k FROM episodes GROUP BY ALL ORDER BY ALL";
  // queryDataset is what `farm trajectories query` runs (DuckDB over the data set's Parquet files).
  const rows = (await queryDataset(ds, query)).rows as { campaign_id: string; task_id: string; n: number; k: number }[];
  assert.equal(rows.length, 2);
  const z = 1.96;
  const wilson = (k: number, n: number) => {
    const c = (k + (z * z) / 2) / (n + z * z);
    const h = (z * Math.sqrt((k * (n - k)) / n + (z * z) / 4)) / (n + z * z);
    return [k / n, Math.max(0, c - h), Math.min(1, c + h)];
  };

  const page = await (await openBrowser()).newPage();
  const requests: string[] = [];
  await page.route("**/*", (route) => {
    const u = route.request().url();
    if (u.startsWith("file://")) return route.continue();
    requests.push(u);
    return route.abort();
  });
  await page.goto(`file://${out}`);
  await page.waitForSelector("#compare tr[data-task]", { timeout: 30_000 });
  assert.deepEqual(requests, [], "the report loads nothing from a network");
  for (const r of rows) {
    const side = r.campaign_id === giveUp ? "base" : "other";
    const row = page.locator(`#${side}-tasks tr[data-campaign="${r.campaign_id}"][data-task="${r.task_id}"]`);
    const got = (await row.evaluate((e) => ["rate", "low", "high", "episodes", "successes"].map((k) => Number(e.getAttribute(`data-${k}`))))) as number[];
    assert.deepEqual(got.slice(3), [r.n, r.k], `${r.campaign_id}: n and k`);
    const want = wilson(r.k, r.n);
    for (let i = 0; i < 3; i++) assert.ok(Math.abs(got[i]! - want[i]!) < 1e-9, `${r.campaign_id} ${["rate", "low", "high"][i]}: page ${got[i]} vs DuckDB + formula ${want[i]}`);
  }
  // The page's own SQL, run by the user's command, gives the page's numbers.
  const sql = await page.locator('#content section[data-side="base"] pre[data-sql="byTask"]').textContent();
  const again = (await queryDataset(ds, sql!)).rows[0] as { successes: number; wilson_low: number; wilson_high: number };
  const baseRow = page.locator(`#base-tasks tr[data-campaign="${giveUp}"]`);
  assert.ok(Math.abs(Number(await baseRow.getAttribute("data-low")) - again.wilson_low) < 1e-12);
  assert.ok(Math.abs(Number(await baseRow.getAttribute("data-high")) - again.wilson_high) < 1e-12);
  // The compare section names the task where the two differ beyond noise.
  assert.match((await page.locator("#differ-list").textContent()) ?? "", /Differ beyond noise.*todo_create_note/);
  assert.equal(await page.locator('#compare tr[data-task="todo_create_note"]').getAttribute("data-differs"), "true");
  // Rows link to the viewer.
  assert.match((await page.locator(`#other-tasks tr[data-campaign="${agent}"] a`).first().getAttribute("href")) ?? "", /^http:\/\/127\.0\.0\.1:8421\/view\/\?campaign=/);
  await page.screenshot({ path: path.join(ARTIFACTS, "report.png"), fullPage: true });
  await page.close();
});
