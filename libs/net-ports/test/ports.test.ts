import { test } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { freePort, isReservedPort, listenOnFreePort, portFree, PortError, waitForPort } from "@farm/net-ports";

function closeServer(s: net.Server): Promise<void> {
  return new Promise((resolve) => s.close(() => resolve()));
}

test("freePort gives a bindable port outside the reserved ones", async () => {
  const port = await freePort();
  assert.ok(port > 0 && port <= 65535);
  assert.equal(isReservedPort(port), false);
  assert.equal(await portFree(port), true);
});

test("portFree is false while something listens, true after it closes", async () => {
  const server = net.createServer();
  const port = await listenOnFreePort(server);
  try {
    assert.equal(await portFree(port), false);
  } finally {
    await closeServer(server);
  }
  assert.equal(await portFree(port), true);
});

test("waitForPort resolves for a listener and names host and port when nothing comes", async () => {
  const server = net.createServer((s) => s.destroy());
  const port = await listenOnFreePort(server);
  try {
    await waitForPort(port, 10_000);
  } finally {
    await closeServer(server);
  }
  const idle = await freePort();
  await assert.rejects(waitForPort(idle, 100), (e: unknown) => e instanceof PortError && e.code === "port_timeout" && e.message.includes(`127.0.0.1:${idle}`));
});

test("the reserved ports are the developer's adb, Redis and emulator range", () => {
  for (const p of [5037, 6379, 5554, 5585]) assert.equal(isReservedPort(p), true, String(p));
  for (const p of [5036, 5553, 5586, 6380]) assert.equal(isReservedPort(p), false, String(p));
});
