/**
 * DeviceHeartbeats (the worker's side) against a real Redis: what the slot states, the runner's events
 * and the jobs a slot takes become in the fleet (state, campaign / episode / step, steps per second,
 * relaunches, last error with its time), and a device that is unbound or a worker that closes leaves it.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { startRedis, type LocalRedis } from "@farm/local-services";
import { silentLogger } from "@farm/log";
import { createRedisClient, readDeviceBeats } from "@farm/queue";
import type { RedisClient as Redis } from "@farm/queue";
import { DeviceHeartbeats } from "../src/device-heartbeat.ts";

let server: LocalRedis;
let redis: Redis;
before(async () => {
  server = await startRedis();
  redis = createRedisClient(server.url);
});
after(async () => {
  await redis?.quit();
  await server?.close();
});

const phasesMs = { policy: 1, action: 1, observation: 1, log: 1 };

test("slot states, jobs and runner events become the device's heartbeat; unbinding and closing remove it", async () => {
  const prefix = "{hbw}";
  const hb = new DeviceHeartbeats({
    redis, prefix, worker: "host a/1", logger: silentLogger, intervalMs: 60_000,
    transportOf: (s) => (s === "emulator-5556" ? "grpc" : "adb"),
    baseUrl: () => "http://10.0.0.7:9465",
    redisUp: () => true,
  });
  hb.slotState("emulator-5554", "binding");
  hb.slotState("emulator-5556", "binding");
  hb.slotState("emulator-5554", "ready");
  hb.slotState("emulator-5556", "ready");
  // emulator-5554 takes episode 4 of campaign c1 and runs 3 steps.
  hb.jobActive("emulator-5554", { campaignId: "c1", episodeIndex: 4, taskId: "classic_2048", junk: "x".repeat(10_000) });
  hb.slotState("emulator-5554", "busy");
  hb.onEvent({ type: "episode:start", serial: "emulator-5554", taskId: "classic_2048", episodeIndex: 4, seed: 1, resetMs: 5 });
  for (let step = 1; step <= 3; step++) hb.onEvent({ type: "step", serial: "emulator-5554", taskId: "classic_2048", episodeIndex: 4, step, reward: 0, phasesMs });
  // emulator-5556 had a failed recovery and a failed attempt.
  hb.onEvent({ type: "device:recovery", serial: "emulator-5556", attempt: 1, ok: false, detail: "adb: device offline", durationMs: 10 });
  hb.jobEnded("emulator-5556", "[DEVICE_TROUBLE] episode 2: device_hung: step 7 timed out");
  await hb.publish();

  const fleet = await readDeviceBeats(redis, prefix);
  assert.equal(fleet.invalid, 0);
  const [busy, failing] = fleet.devices;
  assert.equal(busy?.worker, "host_a_1", "the worker name is made safe for keys and patterns");
  assert.deepEqual(
    { serial: busy?.serial, state: busy?.state, campaignId: busy?.campaignId, episodeIndex: busy?.episodeIndex, step: busy?.step, taskId: busy?.taskId, transport: busy?.transport },
    { serial: "emulator-5554", state: "busy", campaignId: "c1", episodeIndex: 4, step: 3, taskId: "classic_2048", transport: "adb" },
  );
  assert.ok(busy!.stepsPerSec > 0, "steps per second since the last beat");
  assert.equal(busy!.screenUrl, "http://10.0.0.7:9465/devices/emulator-5554/screen");
  assert.equal(failing?.transport, "grpc");
  assert.equal(failing?.relaunches, 1);
  assert.match(failing?.lastError ?? "", /DEVICE_TROUBLE.*step 7 timed out/);
  assert.ok(Math.abs(Date.now() - (failing?.lastErrorAt ?? 0)) < 60_000);

  // The episode ends: the device is ready again, with no current episode, and one episode done.
  hb.onEvent({ type: "episode:end", serial: "emulator-5554", taskId: "classic_2048", episodeIndex: 4, outcome: "truncated", cause: "step_limit", causeDetail: "", steps: 3, totalReward: 0, durationMs: 50 });
  hb.jobEnded("emulator-5554");
  hb.slotState("emulator-5554", "ready");
  hb.slotState("emulator-5556", "closed"); // unbound
  await hb.publish();
  const after1 = await readDeviceBeats(redis, prefix);
  assert.deepEqual(after1.devices.map((d) => [d.serial, d.state, d.campaignId, d.episodesDone, d.lastError]), [["emulator-5554", "ready", undefined, 1, undefined]]);

  await hb.close();
  assert.deepEqual((await readDeviceBeats(redis, prefix)).devices, [], "a closing worker leaves the fleet");
});

test("a host cut off from Redis skips its beats meanwhile; the first beat after says so on every device", async () => {
  const prefix = "{hbcut}";
  let up = true;
  const hb = new DeviceHeartbeats({ redis, prefix, worker: "h1", logger: silentLogger, intervalMs: 60_000, transportOf: () => "adb", baseUrl: () => undefined, redisUp: () => up });
  hb.slotState("emulator-5554", "ready");
  hb.slotState("emulator-5556", "ready");
  up = false;
  await hb.publish();
  assert.equal((await readDeviceBeats(redis, prefix)).devices.length, 0, "nothing written while Redis is down");
  up = true;
  hb.cutOff(61_500);
  await hb.publish();
  const fleet = await readDeviceBeats(redis, prefix);
  assert.equal(fleet.devices.length, 2);
  for (const d of fleet.devices) assert.match(d.lastError ?? "", /^cut off from Redis for 61\.5 s/);
  await hb.close();
});
