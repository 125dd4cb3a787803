/** The client against a real adb server (Debian's `adb`) and against hostile fake servers on free ports. */
import assert from "node:assert/strict";
import net from "node:net";
import test from "node:test";
import { freePort, startAdbServer } from "@farm/local-services";
import { AdbWireError, deviceState, hostRequest, listDevices, openService, serverVersion, trackDeviceLists, waitForDevice, type ServerAddress } from "../src/index.ts";

const OPTS = { timeoutMs: 10_000 };

const isWire = (code: string, pattern?: RegExp) => (e: unknown) => e instanceof AdbWireError && e.code === code && (!pattern || pattern.test(e.message));

/** A fake server that answers every connection with `reply(socket)`. */
async function fakeServer(reply: (s: net.Socket) => void): Promise<{ addr: ServerAddress; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const srv = net.createServer((s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    s.on("error", () => undefined);
    s.once("data", () => reply(s));
  });
  const port = await freePort();
  await new Promise<void>((r) => srv.listen(port, "127.0.0.1", r));
  return {
    addr: { host: "127.0.0.1", port },
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((r) => srv.close(() => r()));
    },
  };
}

test("a real adb server: version, an empty device list, a refused unknown device, a first tracked list", async () => {
  const adb = await startAdbServer();
  const addr = { host: "127.0.0.1", port: adb.port };
  try {
    assert.ok((await serverVersion(addr, OPTS)) >= 31, "adb's host protocol version");
    assert.equal((await listDevices(addr, OPTS)).size, 0);
    await assert.rejects(deviceState(addr, "emulator-9998", OPTS), isWire("refused", /not found/));
    await assert.rejects(waitForDevice(addr, "emulator-9998", { timeoutMs: 300 }), isWire("timeout", /wait-for-any-device/));
    const first = await new Promise<Map<string, string>>((resolve, reject) => {
      const t = trackDeviceLists(addr, { list: (l) => (t.close(), resolve(l)), ended: (e) => reject(e) });
    });
    assert.equal(first.size, 0);
    const refused = await new Promise<AdbWireError>((resolve) =>
      openService(addr, "emulator-9998", "shell:echo hi", { started: () => resolve(new AdbWireError("protocol", "started")), data: () => undefined, ended: () => undefined, failed: (e, stage) => (assert.equal(stage, "transport"), resolve(e)) }),
    );
    assert.ok(isWire("refused", /not found/)(refused), refused.message);
  } finally {
    await adb.close();
  }
});

test("trouble is an AdbWireError naming the server: nobody listening, bad bytes, FAIL, an early close, silence, a cancel", async () => {
  const nobody = { host: "127.0.0.1", port: await freePort() };
  await assert.rejects(listDevices(nobody, OPTS), (e: unknown) => isWire("unreachable", /connection refused/)(e) && (e as AdbWireError).errno === "ECONNREFUSED" && (e as Error).message.includes(String(nobody.port)));
  const garbage = await fakeServer((s) => s.write("WHAT"));
  const fail = await fakeServer((s) => s.write("FAIL0007nope :("));
  const early = await fakeServer((s) => s.end("OKAY00ff"));
  const silent = await fakeServer(() => undefined);
  const badLength = await fakeServer((s) => s.write("OKAYzzzz"));
  try {
    await assert.rejects(listDevices(garbage.addr, OPTS), isWire("protocol", /unexpected reply "WHAT"/));
    await assert.rejects(serverVersion(fail.addr, OPTS), isWire("refused", /refused host:version: nope :\(/));
    await assert.rejects(listDevices(early.addr, OPTS), isWire("closed", /host:devices/));
    await assert.rejects(listDevices(badLength.addr, OPTS), isWire("protocol", /bad length/));
    await assert.rejects(hostRequest(silent.addr, "host:version", "payload", { timeoutMs: 200 }), isWire("timeout", /within 200 ms/));
    const ac = new AbortController();
    const pending = hostRequest(silent.addr, "host:version", "payload", { timeoutMs: 60_000, signal: ac.signal });
    ac.abort();
    await assert.rejects(pending, isWire("cancelled"));
    const ended = await new Promise<AdbWireError>((resolve) => trackDeviceLists(garbage.addr, { list: () => undefined, ended: (e) => resolve(e) }));
    assert.equal(ended.code, "refused");
  } finally {
    await Promise.all([garbage, fail, early, silent, badLength].map((s) => s.close()));
  }
});

test("track-devices: every list the server sends, in order, split anywhere; the end once", async () => {
  const lists = ["0016emulator-5554\toffline\n", "0015emulator-5554\tdevice\n", "0000"];
  const srv = await fakeServer((s) => {
    const bytes = Buffer.from("OKAY" + lists.join(""));
    // One byte at a time: the reader must not depend on how TCP cuts the stream.
    let i = 0;
    const next = (): void => {
      if (i >= bytes.length) return void s.end();
      s.write(bytes.subarray(i, ++i), next);
    };
    next();
  });
  try {
    const seen: string[] = [];
    const end = await new Promise<{ e: AdbWireError; started: boolean }>((resolve) =>
      trackDeviceLists(srv.addr, { list: (l) => seen.push(JSON.stringify([...l])), ended: (e, started) => resolve({ e, started }) }),
    );
    assert.deepEqual(seen, ['[["emulator-5554","offline"]]', '[["emulator-5554","device"]]', "[]"]);
    assert.equal(end.e.code, "closed");
    assert.equal(end.started, true);
  } finally {
    await srv.close();
  }
});
