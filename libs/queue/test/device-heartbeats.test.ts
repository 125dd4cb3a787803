/**
 * Device heartbeats in a real Redis: written under the hash-tagged prefix with a TTL, read back sorted,
 * gone after the TTL (and from the index), removed on request, bounded (a long error is cut), and a
 * value that is not a valid heartbeat is skipped and counted instead of breaking the fleet view.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { RedisClient as Redis } from "../src/connection.ts";
import { publishDeviceBeats, readDeviceBeats, removeDeviceBeats, type DeviceBeat } from "../src/index.ts";
import { deviceBeatKeys, MAX_BEAT_CHARS } from "@farm/queue/testing";
import { privateRedis } from "./private-redis.ts";

let redis: Redis;
privateRedis((client) => (redis = client));

const beat = (worker: string, serial: string, extra: Partial<DeviceBeat> = {}): DeviceBeat => ({
  v: 1, serial, worker, host: "host-a", transport: "adb", state: "ready", stepsPerSec: 0, relaunches: 0, episodesDone: 0, at: Date.now(), ...extra,
});

test("beats are written under the prefix with a TTL, read back sorted, and disappear when not renewed", async () => {
  const prefix = "{hb1}";
  await publishDeviceBeats(redis, prefix, [beat("w2", "emulator-5556"), beat("w1", "emulator-5558", { state: "busy", campaignId: "c1", episodeIndex: 3, step: 7 }), beat("w1", "emulator-5554")], 600);
  const keys = (await redis.keys("*")).filter((k) => k.startsWith(prefix));
  assert.ok(keys.every((k) => k.startsWith(`${prefix}:device`)), keys.join(","));
  const ttl = await redis.pttl(deviceBeatKeys(prefix).beat("w1", "emulator-5554"));
  assert.ok(ttl > 0 && ttl <= 600, `ttl ${ttl}`);
  const { devices, invalid } = await readDeviceBeats(redis, prefix);
  assert.equal(invalid, 0);
  assert.deepEqual(devices.map((d) => `${d.worker}/${d.serial}`), ["w1/emulator-5554", "w1/emulator-5558", "w2/emulator-5556"]);
  assert.equal(devices[1]!.step, 7);
  await new Promise((r) => setTimeout(r, 900));
  assert.deepEqual((await readDeviceBeats(redis, prefix)).devices, [], "expired");
  await publishDeviceBeats(redis, prefix, [], 600); // any writer trims the index
  assert.equal(await redis.zcard(deviceBeatKeys(prefix).index), 0);
});

test("removal, bounded values, and invalid values skipped and counted", async () => {
  const prefix = "{hb2}";
  await publishDeviceBeats(redis, prefix, [beat("w1", "s1", { lastError: "x".repeat(100_000), lastErrorAt: Date.now() }), beat("w1", "s2")], 10_000);
  const raw = await redis.get(deviceBeatKeys(prefix).beat("w1", "s1"));
  assert.ok(raw && raw.length <= MAX_BEAT_CHARS, `value bounded: ${raw?.length}`);
  assert.equal((await readDeviceBeats(redis, prefix)).devices[0]!.lastError!.length, 500);
  await removeDeviceBeats(redis, prefix, "w1", ["s1"]);
  assert.deepEqual((await readDeviceBeats(redis, prefix)).devices.map((d) => d.serial), ["s2"]);
  // Someone writes garbage (or another version) under the prefix: skipped, counted.
  const keys = deviceBeatKeys(prefix);
  for (const [member, value] of [["w9/bad1", "{not json"], ["w9/bad2", JSON.stringify({ ...beat("w9", "bad2"), v: 99 })], ["w9/bad3", JSON.stringify({ ...beat("w9", "bad3"), screenUrl: "file:///etc/passwd" })]]) {
    await redis.set(`${prefix}:device:${member}`, value!, "PX", 10_000);
    await redis.zadd(keys.index, Date.now() + 10_000, member!);
  }
  const fleet = await readDeviceBeats(redis, prefix);
  assert.deepEqual(fleet.devices.map((d) => d.serial), ["s2"]);
  assert.equal(fleet.invalid, 3);
});
