/**
 * The local farm end to end: it starts every part, runs a campaign through them, and stops them all; a start
 * that fails half-way leaves nothing running.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { createLogger } from "@farm/log";
import { startLocalFarm } from "../src/index.ts";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const TASK = path.join(REPO, "tasks/classic_2048.textproto");
const logger = createLogger({ service: "local-farm-test", level: "error" });
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "farm-local-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** True when something accepts connections on the port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ port, host: "127.0.0.1" });
    s.once("connect", () => (s.destroy(), resolve(true)));
    s.once("error", () => resolve(false));
  });
}

test("a local farm runs a campaign on its devices and releases every part on stop", async () => {
  const started: string[] = [];
  const farm = await startLocalFarm({
    devices: 2,
    taskPaths: [TASK],
    outDir: path.join(tmp, "out"),
    queuePrefix: "{local-farm-test}",
    logger,
    environment: {},
    worker: { episode: { settleMs: 0 } },
    bindTimeoutMs: 60_000,
    scheduler: { http: true, tickMs: 100 },
    onStarted: (what) => started.push(what),
  });
  const redisPort = Number(new URL(farm.redisUrl).port);
  try {
    assert.deepEqual(started, ["redis", "adb server", "devices", "worker", "scheduler"]);
    assert.equal(farm.serials.length, 2);
    assert.match(farm.schedulerService!.http.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    await farm.scheduler.submit({ id: "c1", taskId: "classic_2048", policy: "random", episodes: 3, options: { maxEpisodeSteps: 5 } });
    let st = await farm.scheduler.status("c1");
    for (const deadline = Date.now() + 60_000; st.state === "running" && Date.now() < deadline; st = await farm.scheduler.status("c1")) await new Promise((r) => setTimeout(r, 100));
    assert.equal(st.state, "completed");
    assert.equal(st.completed, 3);
    assert.ok(fs.readdirSync(path.join(tmp, "out"), { recursive: true }).some((f) => String(f).endsWith(".avro")), "trajectories committed");
    assert.equal(await listening(redisPort), true);
    assert.equal(await listening(farm.adbPort), true);
  } finally {
    await farm.close();
  }
  assert.equal(await listening(redisPort), false, "redis stopped");
  assert.equal(await listening(farm.adbPort), false, "adb server stopped");
  await farm.close(); // idempotent
});

test("a start that fails half-way releases what it had started and says why", async () => {
  let adbPort = 0;
  await assert.rejects(
    startLocalFarm({
      devices: async (port) => {
        adbPort = port;
        throw new Error("no devices today");
      },
      taskPaths: [TASK],
      outDir: path.join(tmp, "out2"),
      queuePrefix: "{local-farm-test2}",
      logger,
      environment: {},
    }),
    /no devices today/,
  );
  assert.ok(adbPort > 0);
  assert.equal(await listening(adbPort), false, "adb server released");
});
