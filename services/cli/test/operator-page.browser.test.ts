/**
 * Human demonstrations in a real browser (issue 37): a local farm (private Redis, adb server, one simulated
 * device, a worker, the scheduler with its HTTP API in token mode and two operator tokens). A `todo_note_create`
 * family campaign with `--policy human` waits on the device; headless Debian `chromium`, driven through the
 * DevTools protocol by playwright-core, logs in with the operator's token, takes the episode from the list, taps
 * the screen (NEW NOTE, the title field, the body field, SAVE), types the title and body through the page's text
 * box and presses Done. The episode commits once with success 1 from the family's checks, its steps are UI actions
 * by `human:alice` with her step instruction, and the Parquet data set holds them with their screenshots. The
 * page's screenshots land in test-artifacts/.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { exportParquet, queryDataset } from "@farm/dataset";
import { createLogger } from "@farm/log";
import { startLocalFarm, type LocalFarm } from "@farm/local-farm";
import { HttpCampaignClient } from "@farm/scheduler";
import { readTrajectories, type StoredEpisode } from "@farm/trajectory";
import { pollUntil } from "@farm/time";
import { REPO } from "./fixtures.ts";

const CHROMIUM = "/usr/bin/chromium";
const ARTIFACTS = path.join(REPO, "test-artifacts");
const FAMILY = path.join(REPO, "tasks/families/todo_note_create.family.yaml");
const ADMIN = "operator-test-admin-token-0123456789";
const ALICE = "operator-test-alice-token-0123456789";
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "farm-operator-page-"));
const out = path.join(dir, "out");
let farm: LocalFarm;
let browser: BrowserContext | undefined;

before(async () => {
  farm = await startLocalFarm({
    devices: 1,
    taskPaths: [FAMILY],
    outDir: out,
    queuePrefix: "{operator-page}",
    logger: createLogger({ service: "operator-page-test", level: "error" }),
    environment: {},
    worker: { episode: { settleMs: 20 } },
    bindTimeoutMs: 40_000,
    scheduler: { http: true, tickMs: 100, token: ADMIN, operatorTokens: `alice:${ALICE}` },
  });
});

after(async () => {
  await browser?.close().catch(() => undefined);
  await farm?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

interface Element {
  index: number;
  resource_id: string;
  bounds: [number, number, number, number];
}
type OperateState = { mode?: string; view?: { step: number; goal: string; screen: { width: number; height: number }; elements?: Element[] }; frames: number; errors: string[] };
const state = (page: Page) => page.evaluate(() => (window as unknown as { __operate: OperateState }).__operate);

/** Waits for the view of `step` (the device took the previous action) with at least one frame drawn. */
async function atStep(page: Page, step: number): Promise<OperateState> {
  await page.waitForSelector(`body[data-step="${step}"][data-frames]`, { timeout: 20_000 });
  return state(page);
}

/** Taps the element whose resource id ends with `id`, through the page's screen (device pixels → canvas pixels). */
async function tapElement(page: Page, s: OperateState, id: string): Promise<void> {
  const e = s.view?.elements?.find((x) => x.resource_id.endsWith(`:id/${id}`));
  assert.ok(e, `element ${id} on the screen at step ${s.view?.step}: ${JSON.stringify(s.view?.elements?.map((x) => x.resource_id))}`);
  const box = (await page.locator("#screen").boundingBox())!;
  const cx = (e.bounds[0] + e.bounds[2]) / 2;
  const cy = (e.bounds[1] + e.bounds[3]) / 2;
  await page.mouse.click(box.x + (cx / s.view!.screen.width) * box.width, box.y + (cy / s.view!.screen.height) * box.height);
}

test("an operator demonstrates todo_note_create in the browser: one commit, success 1, UI actions with screenshots in the data set", async () => {
  assert.ok(fs.existsSync(CHROMIUM), `${CHROMIUM} is missing: run \`bash deploy/bootstrap.sh\` (installs the Debian package chromium)`);
  const api = farm.schedulerService!.http.url;
  const client = new HttpCampaignClient(api, ADMIN);
  const { campaign } = await client.submit({ taskId: "todo_note_create", episodes: 1, id: "demo-notes", policy: "human", baseSeed: 3, options: { frameEvery: 1, a11yEvery: 1, maxEpisodeSteps: 30, operator: { graceSec: 10, idleSec: 60 } } });

  browser = await chromium.launchPersistentContext(fs.mkdtempSync(path.join(dir, "chromium-")), {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync"],
    viewport: { width: 1200, height: 900 },
  });
  const page = browser.pages()[0] ?? (await browser.newPage());
  const consoleErrors: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") consoleErrors.push(m.text());
  });
  // The operator logs in with her own token and lands on the operator page.
  await page.goto(`${api}/operate`);
  assert.match(page.url(), /\/login\?next=%2Foperate$/);
  await page.fill("input[name=token]", ALICE);
  await Promise.all([page.waitForURL(`${api}/operate`), page.click("button[type=submit]")]);
  const row = page.locator(`tr[data-episode="${campaign.id}-0"]`);
  await row.waitFor({ timeout: 30_000 });
  const goal = (await row.locator("td").first().textContent()) ?? "";
  const m = /titled "([^"]*)" with the text "([^"]*)"/.exec(goal);
  assert.ok(m, `the family's goal is listed: ${goal}`);
  const [, title, body] = m as unknown as [string, string, string];

  await Promise.all([page.waitForURL(/\/operate\?episode=/), page.click(`button[data-take="${campaign.id}-0"]`)]);
  await page.waitForSelector('body[data-mode="drive"]', { timeout: 10_000 });
  let s = await atStep(page, 0);
  assert.equal(s.view?.goal, goal);
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, "operate-start.png"), fullPage: true });

  await page.fill("#op-instruction", "Open a new note");
  await tapElement(page, s, "new_note");
  s = await atStep(page, 1);
  await tapElement(page, s, "title_input");
  s = await atStep(page, 2);
  await page.fill("#op-text", title);
  await page.click("#op-type");
  s = await atStep(page, 3);
  await tapElement(page, s, "body_input");
  s = await atStep(page, 4);
  await page.fill("#op-text", body);
  await page.click("#op-type");
  s = await atStep(page, 5);
  await page.check("#op-boxes");
  await page.screenshot({ path: path.join(ARTIFACTS, "operate-typed.png"), fullPage: true });
  await tapElement(page, s, "save"); // boxes on: the click names the element
  s = await atStep(page, 6);
  await page.click("#op-done");
  await page.waitForSelector("body[data-ended]", { timeout: 20_000 });
  assert.equal(await page.getAttribute("body", "data-ended"), "agent_status");
  await page.screenshot({ path: path.join(ARTIFACTS, "operate-done.png"), fullPage: true });
  assert.deepEqual((await state(page)).errors, [], "no refused or invalid input");

  const st = await pollUntil(async () => {
    const x = await client.status(campaign.id);
    return x.state === "running" ? undefined : x;
  }, { timeoutMs: 30_000, intervalMs: 200 });
  assert.equal(st?.state, "completed", JSON.stringify(st?.summary));
  const episodes: StoredEpisode[] = [];
  for await (const e of readTrajectories(out)) if (e.campaignId === campaign.id) episodes.push(e);
  assert.equal(episodes.length, 1, "committed once");
  const e = episodes[0]!;
  assert.equal(e.success, 1, `success from the family's checks: ${JSON.stringify(e.checks)} ${e.scoreError ?? ""}`);
  assert.equal(e.policyName, "human:alice");
  assert.equal(e.cause, "agent_status");
  assert.deepEqual(
    e.steps.map((x) => JSON.parse(x.ui!.action!).action_type),
    ["click", "click", "input_text", "click", "input_text", "click", "status"],
  );
  assert.equal(JSON.parse(e.steps[5]!.ui!.action!).index !== undefined, true, "with the boxes on the click names the element");
  assert.equal(e.steps[0]!.instruction, "Open a new note");

  const ds = path.join(dir, "ds");
  await exportParquet([out], ds);
  const q = await queryDataset(ds, `SELECT step_index, json_extract_string(action_json, '$.action_type') AS t, screenshot.bytes IS NOT NULL AS shot FROM steps WHERE episode_id = '${campaign.id}-0' ORDER BY step_index`);
  const rows = q.rows as { step_index: number; t: string; shot: boolean }[];
  assert.equal(rows.length, 7);
  assert.ok(rows.every((r) => r.shot), `every step has the screenshot it was chosen on: ${JSON.stringify(rows)}`);
  const ep = await queryDataset(ds, `SELECT policy_name, success FROM episodes WHERE episode_id = '${campaign.id}-0'`);
  assert.deepEqual(ep.rows.map((r) => [r.policy_name, Number(r.success)]), [["human:alice", 1]]);
  assert.deepEqual(consoleErrors, []);
});
