/**
 * Policy versions on a farm (issue 38): a campaign with max staleness 1 (`farm submit --max-staleness 1`) with an HTTP policy stand-in that reports
 * version 1 on every step (an actor that never updates). While the campaign runs the learner raises the campaign's
 * version through the API (`farm campaign set-version`, then `POST /campaigns/:id/policy-version`): the episodes that
 * ran before the raise are fresh, those that ran after it lag by 2 and are marked stale (kept, with the reason); a
 * version that would go back is refused (409). A second campaign with `--on-stale end` whose policy moves a version
 * per step ends as `stale_policy`. The stale metric and one log line per stale episode say so.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { createServer, type Server } from "node:http";
import os from "node:os";
import path from "node:path";
import { createLogger } from "@farm/log";
import { startLocalFarm, type LocalFarm } from "@farm/local-farm";
import { listenOnFreePort } from "@farm/net-ports";
import { readTrajectories, type StoredEpisode } from "@farm/trajectory";
import { pollUntil, sleep } from "@farm/time";
import { REPO, runFarm } from "./fixtures.ts";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "farm-policy-versions-"));
const out = path.join(dir, "out");
const TASK = path.join(REPO, "tasks/classic_2048.textproto");
const logged: string[] = [];
let farm: LocalFarm;
let server: Server;
let policyUrl: string;
/** Set once the campaign's version was raised: episodes 2 and 3 wait for it. */
let raised = false;

before(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      void (async () => {
        const msg = JSON.parse(body) as { type: string; episode: { index: number } | null; observation?: { stepIndex: number } };
        const url = req.url ?? "";
        let version = "1";
        if (url.startsWith("/moving")) version = String(msg.observation?.stepIndex ?? 0); // a new version every step
        else if ((msg.episode?.index ?? 0) >= 2) {
          while (!raised) await sleep(20);
          await sleep(150); // the episode outlives the workers' one-second cache of the campaign's version
        }
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ actionType: "TOUCH", touchPosition: [0.5, 0.5], policy_version: version }));
      })();
    });
  });
  policyUrl = `http://127.0.0.1:${await listenOnFreePort(server, "127.0.0.1")}`;
  farm = await startLocalFarm({
    devices: 2,
    taskPaths: [TASK],
    outDir: out,
    queuePrefix: "{policy-versions}",
    logger: createLogger({ service: "policy-versions-test", level: "info", destination: { write: (line: string) => void logged.push(line) } }),
    environment: {},
    worker: { episode: { settleMs: 0 } },
    bindTimeoutMs: 90_000,
    scheduler: { http: true, tickMs: 100 },
  });
});

after(async () => {
  await farm?.close();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  fs.rmSync(dir, { recursive: true, force: true });
});

async function finished(id: string) {
  const st = await pollUntil(async () => {
    const s = await farm.scheduler.status(id);
    return s.state === "running" ? undefined : s;
  }, { timeoutMs: 90_000, intervalMs: 100 });
  assert.ok(st, `campaign ${id} finished`);
  return st;
}

async function episodesOf(id: string): Promise<StoredEpisode[]> {
  const eps: StoredEpisode[] = [];
  for await (const e of readTrajectories(out)) if (e.campaignId === id) eps.push(e);
  return eps.sort((a, b) => a.episodeIndex - b.episodeIndex);
}

test("mark: the episodes that ran after the learner raised the campaign's version are stale, the others are not", async () => {
  const api = farm.schedulerService!.http.url;
  // As `farm submit … --max-staleness 1` sends it (the flags: agent-options.test.ts).
  const sub = await fetch(`${api}/campaigns`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ taskId: "classic_2048", episodes: 4, policy: `http:${policyUrl}/frozen`, options: { maxEpisodeSteps: 8, staleness: { maxVersions: 1 } } }) });
  assert.equal(sub.status, 201);
  const id = ((await sub.json()) as { campaign: { id: string } }).campaign.id;
  const first = await runFarm(["campaign", "set-version", id, "1", "--api", api]);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /policy version 1 \(the first\)/);
  // Episodes 0 and 1 commit with the campaign at version 1; 2 and 3 wait in their first step.
  await pollUntil(async () => ((await farm.scheduler.status(id)).completed >= 2 ? true : undefined), { timeoutMs: 60_000, intervalMs: 50 });
  const raise = await fetch(`${api}/campaigns/${id}/policy-version`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ version: 3 }) });
  assert.equal(raise.status, 200);
  assert.deepEqual(await raise.json(), { campaignId: id, version: "3", previous: "1", raised: true, versions: 2 });
  raised = true;
  const back = await fetch(`${api}/campaigns/${id}/policy-version`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ version: "2" }) });
  assert.equal(back.status, 409);
  assert.equal(((await back.json()) as { error: { code: string } }).error.code, "VERSION_CONFLICT");
  const shown = await fetch(`${api}/campaigns/${id}/policy-version`);
  assert.deepEqual(await shown.json(), { campaignId: id, version: "3", versions: 2 });

  const st = await finished(id);
  assert.equal(st.state, "completed", JSON.stringify(st.summary));
  const eps = await episodesOf(id);
  assert.deepEqual(eps.map((e) => [e.episodeIndex, e.cause, e.firstPolicyVersion, e.lastPolicyVersion, e.stale ?? null]), [
    [0, "step_limit", "1", "1", null],
    [1, "step_limit", "1", "1", null],
    [2, "step_limit", "1", "1", "version 1 lags the campaign's version 3 by 2 > max staleness 1"],
    [3, "step_limit", "1", "1", "version 1 lags the campaign's version 3 by 2 > max staleness 1"],
  ]);
  for (const e of eps) assert.ok(e.steps.every((s) => s.policyVersion === "1" && typeof s.policyMs === "number"), `episode ${e.episodeIndex}: every step's version and time`);
  const metrics = await farm.worker.metrics.metricsText();
  assert.match(metrics, /farm_episodes_stale_total\{kind="lag",on_stale="mark"[^}]*\} 2/);
  const lines = logged.filter((l) => l.includes('"event":"episode:stale"')).map((l) => JSON.parse(l) as { episodeIndex: number; kind: string });
  assert.deepEqual(lines.map((l) => [l.episodeIndex, l.kind]).sort(), [[2, "lag"], [3, "lag"]]);
});

test("end: a policy whose version moves every step ends its episode as stale_policy past the span", async () => {
  const r = await farm.scheduler.submit({ id: "moving", taskId: "classic_2048", policy: `http:${policyUrl}/moving`, episodes: 1, options: { maxEpisodeSteps: 20, staleness: { maxVersions: 2, onStale: "end" } } });
  assert.ok(r.created);
  const st = await finished("moving");
  assert.equal(st.state, "completed", JSON.stringify(st.summary));
  const [e] = await episodesOf("moving");
  assert.deepEqual([e!.outcome, e!.cause, e!.steps.length, e!.firstPolicyVersion, e!.lastPolicyVersion], ["truncated", "stale_policy", 4, "0", "3"]);
  assert.equal(e!.stale, "versions span 3 > max staleness 2 (0 .. 3)");
  assert.match(await farm.worker.metrics.metricsText(), /farm_episodes_stale_total\{kind="span",on_stale="end"[^}]*\} 1/);
});
