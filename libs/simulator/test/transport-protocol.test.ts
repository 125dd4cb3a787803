/**
 * Protocol details checked by acting as the adb server ourselves over a raw socket: handshake and
 * banner, OKAY before data, one unacknowledged WRTE per stream, maxdata splitting, acks of host
 * data, refusal of unknown services, shell v2 framing; plus the pure codecs.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import {
  A_CLSE, A_CNXN, A_OKAY, A_OPEN, A_WRTE, PacketReader, encodePacket, type Packet,
} from "../src/transport/packet.ts";
import { AdbConnection } from "../src/transport/connection.ts";
import { createServiceRouter, parseService } from "../src/transport/services.ts";
import { V2FrameReader, encodeV2, encodeV2Exit } from "../src/transport/shell-v2.ts";
import { framebufferHeader } from "../src/transport/framebuffer-service.ts";
import { deviceBanner } from "../src/transport/banner.ts";
import type { DeviceBackend } from "../src/transport/backend.ts";

/** A tiny backend: `big N` prints N bytes, `echo`, `cat` copies stdin, `fail` writes stderr and exits 3. */
const backend: DeviceBackend = {
  async run(cmd, io) {
    const [name, arg] = cmd.split(" ");
    if (name === "big") io.write(Buffer.alloc(Number(arg), 0x61));
    else if (name === "echo") io.write(cmd.slice(5) + "\n");
    else if (name === "cat") for await (const c of io.stdin) io.write(c);
    else if (name === "fail") {
      io.writeErr("bad\n");
      return 3;
    }
    return 0;
  },
  framebuffer: () => ({ width: 2, height: 1, rgba: new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]) }),
  fs: { stat: () => undefined, list: () => undefined, read: () => undefined, write: () => {} },
  faults: { latencyMs: () => 0 },
};

const DEVICE_MAXDATA = 4096;
let server: net.Server;
let port: number;
before(async () => {
  server = net.createServer((s) => new AdbConnection(s, { banner: deviceBanner(), maxData: DEVICE_MAXDATA, router: createServiceRouter(backend) }));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  port = (server.address() as net.AddressInfo).port;
});
after(async () => {
  await new Promise((r) => server.close(r));
});

/** Plays the adb server's side of one transport. */
class FakeHost {
  private readonly reader = new PacketReader();
  private readonly inbox: Packet[] = [];
  private wake: (() => void) | undefined;
  constructor(readonly socket: net.Socket) {
    socket.on("data", (b: Buffer) => {
      this.inbox.push(...this.reader.push(b));
      this.wake?.();
    });
  }
  static async connect(): Promise<FakeHost> {
    const s = net.connect({ port, host: "127.0.0.1" });
    await new Promise((r) => s.once("connect", r));
    return new FakeHost(s);
  }
  send(cmd: number, a0: number, a1: number, data?: Uint8Array | string) {
    this.socket.write(encodePacket(cmd, a0, a1, typeof data === "string" ? Buffer.from(data) : data));
  }
  async next(ms = 2000): Promise<Packet | undefined> {
    const deadline = Date.now() + ms;
    while (this.inbox.length === 0 && Date.now() < deadline) {
      await new Promise<void>((r) => {
        this.wake = r;
        setTimeout(r, 20);
      });
    }
    return this.inbox.shift();
  }
  /** True when no WRTE arrives within ms. */
  async noWriteWithin(ms: number): Promise<boolean> {
    await new Promise((r) => setTimeout(r, ms));
    return !this.inbox.some((p) => p.command === A_WRTE);
  }
  close() {
    this.socket.destroy();
  }
}

async function handshake(): Promise<FakeHost> {
  const host = await FakeHost.connect();
  host.send(A_CNXN, 0x01000001, 1024 * 1024, "host::features=shell_v2,cmd,stat_v2");
  const cnxn = await host.next();
  assert.equal(cnxn?.command, A_CNXN);
  assert.equal(cnxn?.arg1, DEVICE_MAXDATA);
  assert.match(cnxn!.data.toString(), /^device::ro\.product\.name=[^;]+;ro\.product\.model=[^;]+;ro\.product\.device=[^;]+;features=shell_v2,cmd,stat_v2$/);
  return host;
}

test("packet codec: round trip, byte-sum checksum, magic, split and merged reads", () => {
  const a = encodePacket(A_WRTE, 5, 9, Buffer.from("hello"));
  assert.equal(a.readUInt32LE(16), [..."hello"].reduce((s, c) => s + c.charCodeAt(0), 0));
  assert.equal(a.readUInt32LE(20), (A_WRTE ^ 0xffffffff) >>> 0);
  const b = encodePacket(A_OKAY, 1, 2);
  const both = Buffer.concat([a, b]);
  const r = new PacketReader();
  const got = [...r.push(both.subarray(0, 7)), ...r.push(both.subarray(7, 30)), ...r.push(both.subarray(30))];
  assert.deepEqual(got.map((p) => [p.command, p.arg0, p.arg1, p.data.toString()]), [[A_WRTE, 5, 9, "hello"], [A_OKAY, 1, 2, ""]]);
  assert.throws(() => new PacketReader().push(Buffer.alloc(24, 1)), /magic/);
});

test("service strings are normalised the way the CLI and adbkit send them", () => {
  assert.deepEqual(parseService("shell:echo hi"), { kind: "shell", command: "echo hi", v2: false });
  assert.deepEqual(parseService("shell,v2,TERM=xterm,raw:echo hi"), { kind: "shell", command: "echo hi", v2: true });
  assert.deepEqual(parseService(`shell,v2,TERM=xterm:export ANDROID_LOG_TAGS="''"; exec logcat`), { kind: "shell", command: `export ANDROID_LOG_TAGS="''"; exec logcat`, v2: true });
  assert.deepEqual(parseService("exec:screencap '-p'"), { kind: "exec", command: "screencap '-p'" });
  assert.deepEqual(parseService("sync:"), { kind: "sync" });
  assert.deepEqual(parseService("framebuffer:"), { kind: "framebuffer" });
  assert.equal(parseService("jdwp"), undefined);
  assert.equal(parseService("reverse:list-forward"), undefined);
});

test("shell v2 frames: split and merged host data reassemble; exit frame layout", () => {
  const frames = Buffer.concat([...encodeV2(0, Buffer.from("abc"), 4096), ...encodeV2(4, Buffer.alloc(0), 4096)]);
  const r = new V2FrameReader();
  const got = [...r.push(frames.subarray(0, 3)), ...r.push(frames.subarray(3))];
  assert.deepEqual(got.map((f) => [f.id, f.payload.toString()]), [[0, "abc"], [4, ""]]);
  assert.deepEqual([...encodeV2Exit(300)], [3, 1, 0, 0, 0, 300 & 0xff]);
  assert.equal(encodeV2(1, Buffer.alloc(10_000), 4096).length, 3, "frames fit in one maxdata WRTE");
});

test("framebuffer header: 13 u32 LE with red, blue, green, alpha offsets", () => {
  const h = framebufferHeader(3, 2);
  const fields = Array.from({ length: 13 }, (_, i) => h.readUInt32LE(i * 4));
  assert.deepEqual(fields, [1, 32, 24, 3, 2, 0, 8, 16, 8, 8, 8, 24, 8]);
});

test("OPEN is accepted with OKAY(devId != 0) before data; one unacked WRTE at a time, each ≤ maxdata", async () => {
  const host = await handshake();
  try {
    host.send(A_OPEN, 77, 0, "shell:big 10000\0");
    const okay = await host.next();
    assert.equal(okay?.command, A_OKAY);
    assert.notEqual(okay!.arg0, 0);
    assert.equal(okay!.arg1, 77);
    const devId = okay!.arg0;
    let total = 0;
    for (;;) {
      const p = await host.next();
      assert.ok(p, "device went silent");
      if (p.command === A_CLSE) {
        assert.equal(p.arg0, devId);
        break;
      }
      assert.equal(p.command, A_WRTE);
      assert.ok(p.data.length <= DEVICE_MAXDATA);
      total += p.data.length;
      assert.ok(await host.noWriteWithin(50), "sent another WRTE before our OKAY");
      host.send(A_OKAY, 77, devId);
    }
    assert.equal(total, 10_000);
  } finally {
    host.close();
  }
});

test("host WRTEs are acknowledged; legacy shell merges stderr; unknown services are refused", async () => {
  const host = await handshake();
  try {
    host.send(A_OPEN, 5, 0, "jdwp\0");
    const refused = await host.next();
    assert.deepEqual([refused?.command, refused?.arg0, refused?.arg1], [A_CLSE, 0, 5]);

    host.send(A_OPEN, 6, 0, "exec:cat\0");
    const okay = await host.next();
    const devId = okay!.arg0;
    host.send(A_WRTE, 6, devId, "ping");
    const ack = await host.next();
    assert.deepEqual([ack?.command, ack?.arg0, ack?.arg1], [A_OKAY, devId, 6]);
    const echoed = await host.next();
    assert.equal(echoed?.data.toString(), "ping");
    host.send(A_OKAY, 6, devId);
    host.send(A_CLSE, 6, devId);
    const closed = await host.next();
    assert.deepEqual([closed?.command, closed?.arg0, closed?.arg1], [A_CLSE, devId, 6]);

    host.send(A_OPEN, 7, 0, "shell:fail\0");
    const ok2 = await host.next();
    const merged = await host.next();
    assert.equal(merged?.data.toString(), "bad\n");
    host.send(A_OKAY, 7, ok2!.arg0);
    assert.equal((await host.next())?.command, A_CLSE);
  } finally {
    host.close();
  }
});

test("shell v2: stdout/stderr frames, exactly one exit frame even after close-stdin", async () => {
  const host = await handshake();
  try {
    host.send(A_OPEN, 9, 0, "shell,v2,raw:fail\0");
    const devId = (await host.next())!.arg0;
    host.send(A_WRTE, 9, devId, Buffer.concat(encodeV2(4, Buffer.alloc(0), 4096)));
    const data: Buffer[] = [];
    for (;;) {
      const p = await host.next();
      assert.ok(p);
      if (p.command === A_CLSE) break;
      if (p.command === A_WRTE) {
        data.push(p.data);
        host.send(A_OKAY, 9, devId);
      }
    }
    const frames = new V2FrameReader().push(Buffer.concat(data));
    assert.deepEqual(frames.map((f) => [f.id, f.payload.toString("latin1")]), [[2, "bad\n"], [3, "\x03"]]);
  } finally {
    host.close();
  }
});
