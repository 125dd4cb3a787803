import { test } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { startRedis, startAdbServer, adbServerAnswers, adbServerDevices, freePort } from "../src/index.ts";
import { isReservedPort } from "@farm/net-ports";

async function redisPing(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ port, host: "127.0.0.1" }, () => s.write("PING\r\n"));
    s.once("data", (b) => {
      s.destroy();
      resolve(b.toString().trim());
    });
    s.once("error", reject);
  });
}

test("freePort never returns a reserved port", async () => {
  for (let i = 0; i < 20; i++) assert.equal(isReservedPort(await freePort()), false);
});

test("startRedis gives a private server that answers PING and is gone after stop", async () => {
  const redis = await startRedis();
  try {
    assert.notEqual(redis.port, 6379);
    assert.equal(await redisPing(redis.port), "+PONG");
  } finally {
    await redis.close();
  }
  await assert.rejects(redisPing(redis.port));
});

test("startAdbServer gives a private adb server that survives a restart on the same port", async () => {
  const adb = await startAdbServer();
  try {
    assert.notEqual(adb.port, 5037);
    assert.equal(await adbServerAnswers(adb.port), true);
    await adb.restart();
    assert.equal(await adbServerAnswers(adb.port), true);
  } finally {
    await adb.close();
  }
  assert.equal(await adbServerAnswers(adb.port), false);
});

test("adbServerDevices lists nothing on a fresh private server", async () => {
  const adb = await startAdbServer();
  try {
    assert.deepEqual([...(await adbServerDevices(adb.port)).entries()], []);
  } finally {
    await adb.close();
  }
});
