/**
 * Operators come and go (issue 37), over the scheduler's HTTP API as the operator page uses it (event stream +
 * POSTs), against a local farm with one simulated device: the operator role reaches nothing but /operate and
 * /api/operator/* (no campaigns, queue, fleet or tokens); an abandoned episode is recorded as such with
 * `onAbandon: record`; a second operator cannot take a leased episode and a watcher's input is refused; a closed
 * stream reopened within the grace period drives the same episode on; past the grace the episode ends
 * operator_abandoned, nothing is committed, and it is retried (waiting again for an operator).
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createLogger } from "@farm/log";
import { startLocalFarm, type LocalFarm } from "@farm/local-farm";
import { HttpCampaignClient, SCHEDULER_ROUTES } from "@farm/scheduler";
import { readTrajectories, type StoredEpisode } from "@farm/trajectory";
import { pollUntil, sleep } from "@farm/time";
import { REPO } from "./fixtures.ts";

const FAMILY = path.join(REPO, "tasks/families/todo_note_create.family.yaml");
const ADMIN = "operator-leases-admin-token-0123456789";
const ALICE = "operator-leases-alice-token-0123456789";
const BOB = "operator-leases-bob-token-0123456789";
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "farm-operator-leases-"));
const out = path.join(dir, "out");
let farm: LocalFarm;
let api: string;

before(async () => {
  farm = await startLocalFarm({
    devices: 1,
    taskPaths: [FAMILY],
    outDir: out,
    queuePrefix: "{operator-leases}",
    logger: createLogger({ service: "operator-leases-test", level: "error" }),
    environment: {},
    worker: { episode: { settleMs: 20 } },
    bindTimeoutMs: 40_000,
    scheduler: { http: true, tickMs: 100, token: ADMIN, operatorTokens: `alice:${ALICE},bob:${BOB}` },
  });
  api = farm.schedulerService!.http.url;
});

after(async () => {
  await farm?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const call = async (token: string, method: string, p: string, body?: unknown) => {
  const r = await fetch(`${api}${p}`, { method, headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const text = await r.text();
  let json: { error?: { code: string } } & Record<string, unknown> = {};
  try {
    json = JSON.parse(text);
  } catch {
    /* HTML or text */
  }
  return { status: r.status, json };
};

interface Waiting {
  episodeId: string;
  step: number;
  since: number;
  leasedBy: string | null;
}
const waitingOf = async (episodeId: string): Promise<Waiting | undefined> => ((await call(ALICE, "GET", "/api/operator/episodes")).json.episodes as Waiting[]).find((e) => e.episodeId === episodeId);

/** An operator page's event stream: the events so far, a wait for the next of a kind, and close (a closed tab). */
function openEvents(token: string, episodeId: string) {
  const ac = new AbortController();
  const events: { event: string; data: Record<string, unknown> }[] = [];
  const done = (async () => {
    const r = await fetch(`${api}/api/operator/episodes/${episodeId}/events`, { headers: { authorization: `Bearer ${token}` }, signal: ac.signal });
    assert.equal(r.status, 200);
    const dec = new TextDecoder();
    let buf = "";
    for await (const chunk of r.body!) {
      buf += dec.decode(chunk as Uint8Array, { stream: true });
      let i;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const ev = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (ev && data) events.push({ event: ev, data: JSON.parse(data) });
      }
    }
  })().catch(() => undefined);
  return {
    events,
    next: (event: string, pred: (d: Record<string, unknown>) => boolean = () => true, timeoutMs = 15_000) =>
      pollUntil(() => events.find((e) => e.event === event && pred(e.data))?.data, { timeoutMs, intervalMs: 20 }).then((d) => {
        assert.ok(d, `event ${event} within ${timeoutMs} ms; got ${events.map((e) => e.event).join(",")}`);
        return d;
      }),
    close: async () => {
      ac.abort();
      await done;
    },
  };
}

async function committed(campaignId: string): Promise<StoredEpisode[]> {
  const got: StoredEpisode[] = [];
  if (!fs.existsSync(out)) return got;
  for await (const e of readTrajectories(out)) if (e.campaignId === campaignId) got.push(e);
  return got;
}

test("the operator role may use the operator page and its API only: no campaigns, queue, fleet, viewer or tokens", async () => {
  assert.equal((await call(ALICE, "GET", "/api/operator/episodes")).status, 200);
  assert.equal((await call(ALICE, "GET", "/operate")).status, 200);
  const post = await call(ALICE, "POST", "/campaigns", { taskId: "todo_note_create", episodes: 1, policy: "human" });
  assert.equal(post.status, 403);
  assert.equal(post.json.error?.code, "ROLE_FORBIDDEN");
  for (const [route, methods] of SCHEDULER_ROUTES) {
    if (["/healthz", "/login", "/logout", "/metrics", "/favicon.ico", "/operate"].includes(route) || route.startsWith("/web/") || route.startsWith("/api/operator/")) continue;
    const p = route.replace(/:[A-Za-z]+/g, "x");
    const method = methods.startsWith("GET") ? "GET" : "POST";
    const r = await call(ALICE, method, p, method === "POST" ? {} : undefined);
    assert.equal(r.status, 403, `${method} ${p} as an operator`);
  }
  assert.equal((await call(ALICE, "GET", "/ui")).status, 403, "the queue UI");
  // The admin token still reaches everything.
  assert.equal((await call(ADMIN, "GET", "/campaigns")).status, 200);
});

test("onAbandon record: an operator who leaves ends the episode operator_abandoned, committed as truncated data", async () => {
  const client = new HttpCampaignClient(api, ADMIN);
  const { campaign } = await client.submit({ taskId: "todo_note_create", episodes: 1, id: "leave-record", policy: "human", options: { operator: { graceSec: 5, idleSec: 60, onAbandon: "record" } } });
  const id = `${campaign.id}-0`;
  await pollUntil(() => waitingOf(id), { timeoutMs: 20_000, intervalMs: 100 });
  assert.equal((await call(ALICE, "POST", `/api/operator/episodes/${id}/lease`)).status, 200);
  assert.equal((await call(BOB, "POST", `/api/operator/episodes/${id}/release`)).status, 403, "only the holder may leave");
  assert.equal((await call(ALICE, "POST", `/api/operator/episodes/${id}/release`)).status, 200);
  const st = await pollUntil(async () => ((await client.status(campaign.id)).state === "running" ? undefined : client.status(campaign.id)), { timeoutMs: 20_000, intervalMs: 100 });
  assert.equal(st?.state, "completed");
  const eps = await committed(campaign.id);
  assert.equal(eps.length, 1);
  assert.equal(eps[0]!.cause, "operator_abandoned");
  assert.equal(eps[0]!.outcome, "truncated");
  assert.equal(eps[0]!.steps.length, 0);
});

test("leases: one driver, watchers read-only; a stream reopened within the grace drives on; past it the episode is abandoned and retried", async () => {
  const client = new HttpCampaignClient(api, ADMIN);
  const { campaign } = await client.submit({ taskId: "todo_note_create", episodes: 1, id: "leases", policy: "human", options: { operator: { graceSec: 1.5, idleSec: 60 } } });
  const id = `${campaign.id}-0`;
  const first = await pollUntil(() => waitingOf(id), { timeoutMs: 20_000, intervalMs: 100 });
  assert.ok(first);

  // Alice takes it; Bob cannot, and his input as a watcher is refused.
  assert.equal((await call(ALICE, "POST", `/api/operator/episodes/${id}/lease`)).status, 200);
  const bobLease = await call(BOB, "POST", `/api/operator/episodes/${id}/lease`);
  assert.equal(bobLease.status, 409);
  assert.equal(bobLease.json.error?.code, "LEASED");
  const bob = openEvents(BOB, id);
  assert.equal((await bob.next("hello")).mode, "watch");
  const bobAct = await call(BOB, "POST", `/api/operator/episodes/${id}/actions`, { action: { action_type: "navigate_back" }, step: 0 });
  assert.equal(bobAct.status, 403);
  assert.equal(bobAct.json.error?.code, "NOT_LEASE_HOLDER");

  // Alice's page: drive, a frame and step 0's view; the tab closes and reopens within the grace period.
  let alice = openEvents(ALICE, id);
  assert.equal((await alice.next("hello")).mode, "drive");
  await alice.next("frame");
  const view0 = await alice.next("view", (d) => d.step === 0);
  await alice.close();
  await sleep(500);
  alice = openEvents(ALICE, id);
  assert.equal((await alice.next("hello")).mode, "drive", "the same operator drives on");
  await alice.next("view", (d) => d.step === 0);
  const newNote = (view0.elements as { index: number; resource_id: string }[]).find((e) => e.resource_id.endsWith(":id/new_note"))!;
  const act = await call(ALICE, "POST", `/api/operator/episodes/${id}/actions`, { action: { action_type: "click", index: newNote.index }, step: 0 });
  assert.equal(act.status, 202);
  await alice.next("view", (d) => d.step === 1);
  await bob.next("view", (d) => d.step === 1); // the watcher sees it too
  const stale = await call(ALICE, "POST", `/api/operator/episodes/${id}/actions`, { action: { action_type: "navigate_back" }, step: 0 });
  assert.equal(stale.status, 409, "an action for an earlier step is refused");
  const resumed = await waitingOf(id);
  assert.equal(resumed?.since, first.since, "the same attempt");
  assert.equal(resumed?.step, 1);

  // The tab closes for longer than the grace: abandoned, not committed, retried for another operator.
  await alice.close();
  const ended = await bob.next("end", () => true, 10_000);
  assert.equal(ended.cause, "operator_abandoned");
  await bob.close();
  const again = await pollUntil(async () => {
    const w = await waitingOf(id);
    return w && w.since > first.since ? w : undefined;
  }, { timeoutMs: 20_000, intervalMs: 100 });
  assert.ok(again, "the episode waits again for an operator (a retry)");
  assert.equal(again.step, 0);
  assert.equal(again.leasedBy, null);
  assert.deepEqual(await committed(campaign.id), [], "nothing half-written is committed");
  const workerMetrics = await farm.worker.metrics.registry.metrics();
  assert.match(workerMetrics, /farm_operator_abandons_total\{[^}]*reason="grace_expired"[^}]*\} 1/);
  assert.match(workerMetrics, /farm_episode_retries_total\{[^}]*cause="operator_abandoned"[^}]*\} 1/);
  const schedulerMetrics = await farm.schedulerService!.metrics.registry.metrics();
  assert.match(schedulerMetrics, /farm_operator_leases_total\{[^}]*result="refused"[^}]*\} 1/);
  assert.match(schedulerMetrics, /farm_operator_actions_total\{[^}]*result="refused_not_holder"[^}]*\} 1/);
  await client.cancel(campaign.id);
});
