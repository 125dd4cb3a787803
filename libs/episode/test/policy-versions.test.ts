/**
 * Policy versions in episodes (issue 38): comparing versions (whole numbers, else the campaign's order), staleness by
 * span and by lag; on a simulated device, an HTTP policy stand-in whose version changes mid-episode has every step's
 * version and policy time recorded and the episode's first and last (and an llm stand-in's header, then its model field); `--max-staleness` marks the right episodes, and
 * `onStale: "end"` ends one as `stale_policy`.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { startAdbServer, startLlmStandIn, type LocalAdbServer } from "@farm/local-services";
import { listenOnFreePort } from "@farm/net-ports";
import { startSimulatedDevices } from "@farm/simulator";
import { AdbDriver } from "@farm/adb";
import { httpPolicy, llmPolicy, type Policy } from "@farm/policy";
import { DeviceSession, staleness, versionDistance, versionSpan, type CampaignVersions, type EpisodeConfig, type StalenessOptions } from "../src/index.ts";
import { task } from "./fixtures.ts";

describe("comparing versions", () => {
  it("whole numbers as numbers, others by the campaign's order, incomparable pairs count for nothing", () => {
    assert.equal(versionDistance("3", "10"), 7);
    assert.equal(versionDistance("10", "3"), -7);
    assert.equal(versionDistance("a", "c", ["a", "b", "c"]), 2);
    assert.equal(versionDistance("a", "zz", ["a", "b"]), undefined);
    assert.equal(versionDistance("007", "9"), undefined, "007 is not written as a whole number");
    assert.equal(versionDistance("007", "9", ["007", "8", "9"]), 2);
    assert.equal(versionSpan(["4", undefined, "6", "5"]), 2);
    assert.equal(versionSpan([undefined]), undefined);
  });
  it("span first, then lag behind the campaign's current version", () => {
    assert.equal(staleness(["1", "2"], 1), undefined);
    assert.deepEqual(staleness(["1", "2", "3"], 1), { kind: "span", distance: 2, reason: "versions span 2 > max staleness 1 (1 .. 3)" });
    const campaign: CampaignVersions = { current: "ckpt-d", order: ["ckpt-a", "ckpt-b", "ckpt-c", "ckpt-d"] };
    assert.deepEqual(staleness(["ckpt-a", "ckpt-b"], 2, campaign), { kind: "lag", distance: 3, reason: "version ckpt-a lags the campaign's version ckpt-d by 3 > max staleness 2" });
    assert.equal(staleness(["ckpt-c"], 2, campaign), undefined);
    assert.equal(staleness(["unknown"], 0, campaign), undefined, "a version the campaign never raised cannot lag");
  });
});

const CONFIG: EpisodeConfig = { settleMs: 0, logSettleMs: 0, stepTimeoutMs: 20_000, resetTimeoutMs: 30_000, adbCallTimeoutMs: 10_000, recoveryBackoffMs: 100, recoveryWaitMs: 5000, appScreenCheckEverySteps: 0 };
const STEPS = 6;

let adb: LocalAdbServer;
let fleet: Awaited<ReturnType<typeof startSimulatedDevices>>;
let driver: AdbDriver;
let session: DeviceSession;
let server: Server;
let url: string;
/** The stand-in's version for the n-th request of an episode (n from 0): odd answers say it in the body, even ones in the header. */
let versionAt: (n: number) => string | undefined = () => undefined;
let served = 0;

before(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const v = versionAt(served++);
      const body: Record<string, unknown> = { actionType: "TOUCH", touchPosition: [0.02, 0.98] };
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (v !== undefined && served % 2 === 0) body.policy_version = v;
      else if (v !== undefined) headers["x-policy-version"] = v;
      res.writeHead(200, headers);
      res.end(JSON.stringify(body));
    });
  });
  url = `http://127.0.0.1:${await listenOnFreePort(server, "127.0.0.1")}/act`;
  adb = await startAdbServer();
  fleet = await startSimulatedDevices({ adbPort: adb.port, count: 1 });
  driver = new AdbDriver({ port: adb.port });
  session = await DeviceSession.open({ device: driver.device(fleet.devices[0]!.serial), task: task({ id: "versions_notes", app: "notes", maxEpisodeSteps: STEPS }), config: CONFIG });
  assert.equal(session.state, "ready", session.unusableReason);
});

after(async () => {
  await session?.close();
  await driver?.close();
  await fleet?.close();
  await adb?.close();
  await new Promise((r) => server?.close(r));
});

async function run(index: number, version: (n: number) => string | undefined, staleOpts?: StalenessOptions, policy: Policy = httpPolicy(url, { needsPixels: false })) {
  served = 0;
  versionAt = version;
  try {
    return await session.runEpisode({ seed: index, index, policy, ...(staleOpts ? { staleness: staleOpts } : {}) });
  } finally {
    await policy.close();
  }
}

describe("versions on a simulated device", () => {
  it("every step records the version that chose it and the policy's time; the episode its first and last", async () => {
    // Versions 1,1,2,2,3,3,4 (raised every second request), alternately in the body and the header.
    const t = await run(0, (n) => String(1 + Math.floor(n / 2)));
    assert.equal(t.cause, "step_limit");
    // max_episode_steps 6: the episode ends at step 7 (step_limit).
    assert.deepEqual(t.steps.map((s) => s.policyVersion), ["1", "1", "2", "2", "3", "3", "4"]);
    assert.ok(t.steps.every((s) => typeof s.policyMs === "number" && s.policyMs >= 0), "policyMs on every step");
    assert.deepEqual([t.firstPolicyVersion, t.lastPolicyVersion, t.stale], ["1", "4", undefined]);
  });

  it("llm: the model server's X-Policy-Version while it sends one, then the completion's model field", async () => {
    let answered = 0;
    const llm = await startLlmStandIn({
      model: "qwen",
      script: Array.from({ length: STEPS + 2 }, () => ({ json: { action_type: "answer", text: "ok" } })),
      policyVersionHeader: () => (++answered <= 2 ? String(9 + answered) : undefined),
      answerModel: () => "qwen-ckpt-b",
    });
    try {
      const t = await run(6, () => undefined, undefined, llmPolicy({ endpoint: llm.endpoint, model: "qwen", screenshot: false }));
      assert.deepEqual(t.steps.map((s) => s.policyVersion), ["10", "11", "qwen-ckpt-b", "qwen-ckpt-b", "qwen-ckpt-b", "qwen-ckpt-b", "qwen-ckpt-b"]);
      assert.deepEqual([t.firstPolicyVersion, t.lastPolicyVersion], ["10", "qwen-ckpt-b"]);
    } finally {
      await llm.close();
    }
  });

  it("a policy that reports no versions: policy time only", async () => {
    const t = await run(1, () => undefined);
    assert.ok(t.steps.every((s) => s.policyVersion === undefined && typeof s.policyMs === "number"));
    assert.ok(!("firstPolicyVersion" in t) && !("stale" in t));
  });

  it("mark: versions spanning more than V are marked, the episode runs to its end", async () => {
    const t = await run(2, (n) => String(1 + Math.floor(n / 2)), { maxVersions: 1 });
    assert.equal(t.cause, "step_limit");
    assert.equal(t.stale, "versions span 2 > max staleness 1 (1 .. 3)");
    const fresh = await run(3, (n) => String(1 + Math.floor(n / 4)), { maxVersions: 1 });
    assert.equal(fresh.stale, undefined, "versions 1 and 2 span 1");
  });

  it("mark: lagging the campaign's current version by more than V (read while the episode runs)", async () => {
    let current = "5";
    const campaignVersions = async (): Promise<CampaignVersions> => ({ current, order: [] });
    const t = await run(4, (n) => {
      if (n === 3) current = "9"; // the learner raised the campaign's version mid-episode
      return "5";
    }, { maxVersions: 2, campaignVersions });
    assert.equal(t.cause, "step_limit");
    assert.equal(t.stale, "version 5 lags the campaign's version 9 by 4 > max staleness 2");
  });

  it("end: the episode ends truncated with stale_policy after the step that made it stale", async () => {
    const t = await run(5, (n) => String(1 + Math.floor(n / 2)), { maxVersions: 1, onStale: "end" });
    assert.deepEqual([t.outcome, t.cause], ["truncated", "stale_policy"]);
    assert.equal(t.steps.length, 5, "steps 1..5: the fifth answer (version 3) made the span 2");
    assert.match(t.causeDetail, /versions span 2 > max staleness 1/);
    assert.equal(t.stale, "versions span 2 > max staleness 1 (1 .. 3)");
  });
});
