/**
 * Hostile task servers (a node server of our own, one behaviour per path prefix): malformed JSON, wrong types,
 * unknown fields, a slow or dripping answer, a huge body, an endless chain of device calls, disallowed device calls,
 * connection resets, HTTP errors, a session that changes its name, a phase past its deadline. Each ends in a clear
 * TaskProtocolError (initialize rejects; score answers `error`) within a bounded time, the process goes on, and
 * nothing the farm refuses reaches the device.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { AddressInfo, Socket } from "node:net";
import type { StepResult } from "@farm/adb";
import type { DeviceCalls } from "@farm/scoring";
import type { AdbRequest } from "@farm/task";
import { createRemoteTaskInstance, createTaskProtocolCounters, TaskProtocolError, type RemoteTaskOptions, type TaskProtocolEvent } from "../src/index.ts";

type Behaviour = (req: IncomingMessage, res: ServerResponse, body: unknown, step: number) => void;

const sockets = new Set<Socket>();
let server: Server;
let connections = 0;
const servedOn = new WeakMap<Socket, number>();
let staleDrops = 0;
let base: string;
let taskDir: string;
const steps = new Map<string, number>();

const json = (res: ServerResponse, v: unknown, status = 200) => {
  const text = JSON.stringify(v);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
};
const call = (id: string, request: unknown) => ({ session: "s1", device_call: { id, request } });
const initResult = { session: "s1", result: { goal: "Do it.", params: { n: 1 } } };

/** Answers a session with `calls` device calls (then the result); the score phase gets `score`. */
const withCalls =
  (calls: unknown[], score: (res: ServerResponse) => void = (res) => json(res, { session: "s1", result: { success: 1 } })): Behaviour =>
  (req, res, _body, step) => {
    if (req.url!.endsWith("/score")) return score(res);
    if (step < calls.length) return json(res, call(`c${step}`, calls[step]));
    json(res, initResult);
  };

const behaviours: Record<string, Behaviour> = {
  malformed: (_q, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end('{"session": "s1", "result": {"goal": ');
  },
  "wrong-types": (_q, res) => json(res, call("c1", { tap: { x: "left", y: 3 } })),
  "wrong-result": (_q, res) => json(res, { session: "s1", result: { goal: 42 } }),
  "unknown-field": (_q, res) => json(res, { session: "s1", result: { goal: "g" }, surprise: true }),
  "two-members": (_q, res) => json(res, call("c1", { tap: { x: 1, y: 1 }, pull: { path: "/x" } })),
  "bad-call-id": (_q, res) => json(res, call("../../etc", { get_current_activity: {} })),
  "no-session": (_q, res) => json(res, { result: { goal: "g" } }),
  "other-session": (_q, res, _b, step) => json(res, step === 0 ? call("c1", { getCurrentActivity: {} }) : { session: "s2", result: { goal: "g" } }),
  slow: () => {
    // never answers
  },
  drip: (_q, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    const t = setInterval(() => (res.destroyed ? clearInterval(t) : res.write(" ")), 50);
  },
  huge: (_q, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    let sent = 0;
    const pump = () => {
      while (sent < 200 && !res.destroyed) {
        sent++;
        if (!res.write(chunk)) return res.once("drain", pump);
      }
      res.end();
    };
    pump();
  },
  "huge-declared": (_q, res) => {
    res.writeHead(200, { "content-type": "application/json", "content-length": String(2 ** 40) });
    res.write("{");
  },
  "big-generic": (_q, res) => json(res, call("c1", { generic: { args: ["shell", "echo", ...Array.from({ length: 20 }, () => "x".repeat(100_000))] } })),
  "big-push": withCalls([{ push: { path: "/sdcard/big.bin", content: Buffer.alloc(2 * 1024 * 1024, 7).toString("base64") } }]),
  endless: (_q, res, _b, step) => json(res, call(`c${step}`, { getCurrentActivity: {} })),
  "install-host": withCalls([{ installApk: { filesystem: { path: "/etc/passwd" } } }]),
  "install-escape": withCalls([{ installApk: { filesystem: { path: "../../../../etc/passwd" } } }]),
  "install-inside": withCalls([{ installApk: { filesystem: { path: "app.apk" } } }]),
  "generic-serial": withCalls([{ generic: { args: ["-s", "emulator-5556", "shell", "rm", "-rf", "/sdcard"] } }]),
  "generic-push": withCalls([{ generic: { args: ["push", "/etc/shadow", "/sdcard/x"] } }]),
  "emu-kill": withCalls([{ generic: { args: ["emu", "kill"] } }]),
  "reset-now": (req) => req.socket.destroy(),
  "reset-mid": (_q, res) => {
    res.writeHead(200, { "content-type": "application/json", "content-length": "1000" });
    res.write('{"session": "s1", ');
    setTimeout(() => res.socket?.destroy(), 20);
  },
  "http-500": (_q, res) => json(res, { error: { type: "KeyError", message: "'on_or_off'\u001b[31m" } }, 500),
  "task-error": (_q, res) => json(res, { session: "s1", error: { type: "RuntimeError", message: "snapshot missing" } }),
  "score-malformed": withCalls([], (res) => {
    res.writeHead(200);
    res.end("nope");
  }),
  "score-out-of-range": withCalls([], (res) => json(res, { session: "s1", result: { success: 1.5 } })),
  "score-ok": withCalls([{ settings: { nameSpace: "GLOBAL", get: { key: "wifi_on" } } }], (res) => json(res, { session: "s1", result: { success: 0.5, reward: 2, details: { seen: "1" } } })),
  stale: withCalls([{ getCurrentActivity: {} }, { getCurrentActivity: {} }]),
  "slow-calls": (req, res, _b, step) => setTimeout(() => json(res, call(`c${step}`, { getCurrentActivity: {} })), 150),
};

before(async () => {
  taskDir = fs.mkdtempSync(path.join(os.tmpdir(), "task-protocol-"));
  fs.writeFileSync(path.join(taskDir, "app.apk"), "not really an apk");
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const name = req.url!.split("/")[1]!;
      // "stale": a kept-alive connection the server drops when the next request arrives on it (as an idle timeout does).
      const served = servedOn.get(req.socket) ?? 0;
      servedOn.set(req.socket, served + 1);
      if (name === "stale" && served > 0) {
        staleDrops++;
        return req.socket.destroy();
      }
      const b = behaviours[name];
      if (!b) return json(res, { error: { message: `no behaviour ${name}` } }, 404);
      if (req.method === "DELETE") return json(res, { closed: true });
      // One counter per behaviour and session start (POST .../v1/sessions resets it).
      if (req.url!.endsWith("/v1/sessions")) steps.set(name, 0);
      const step = steps.get(name) ?? 0;
      steps.set(name, step + 1);
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString() || "null");
      } catch {
        body = undefined;
      }
      b(req, res, body, step);
    });
  });
  server.on("connection", (s) => {
    connections++;
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((r) => server.close(() => r()));
  fs.rmSync(taskDir, { recursive: true, force: true });
});

/** A device that records what reached it and answers ok. */
function recordingDevice(): DeviceCalls & { seen: AdbRequest[] } {
  const seen: AdbRequest[] = [];
  const ok = (data?: StepResult["data"]): StepResult => ({ status: "ok", message: "", output: "1\n", durationMs: 1, ...(data ? { data } : {}) });
  return {
    seen,
    async execute(r) {
      seen.push(r);
      if (r.cmd.command === "get_current_activity") return ok({ kind: "current_activity", fullActivity: "a.b/.C" });
      return ok();
    },
    shell: async () => ({ status: "ok", message: "", stdout: "", durationMs: 0 }),
    screenTree: async () => ({ ok: false, source: "uiautomator", reason: "not in this test" }) as never,
  };
}

const OPTS: RemoteTaskOptions = { exchangeTimeoutMs: 800, callTimeoutMs: 500, maxCallsPerPhase: 25, taskDir: "" };

/** initialize() of the behaviour; resolves with the error it rejected with (fails if it resolved) and the time taken. */
async function initError(name: string, opts: RemoteTaskOptions = {}, timeoutSec = 10): Promise<{ e: TaskProtocolError; ms: number; dev: ReturnType<typeof recordingDevice>; events: TaskProtocolEvent[] }> {
  const dev = recordingDevice();
  const events: TaskProtocolEvent[] = [];
  const inst = createRemoteTaskInstance({ url: `${base}/${name}`, className: "T", timeoutSec }, { index: 0, seed: 1 }, { ...OPTS, taskDir, onEvent: (e) => events.push(e), ...opts });
  const t0 = performance.now();
  const r = await inst.initialize(dev, new AbortController().signal).then(
    (v) => ({ resolved: v }),
    (e: unknown) => ({ e }),
  );
  const ms = performance.now() - t0;
  await inst.close();
  assert.ok("e" in r, `${name}: initialize resolved ${JSON.stringify((r as { resolved: unknown }).resolved)}`);
  assert.ok(r.e instanceof TaskProtocolError, `${name}: ${String(r.e)}`);
  assert.ok(r.e.message.startsWith(`task server ${base}/${name} T: `), r.e.message);
  assert.ok(r.e.message.length < 800, `${name}: a message of ${r.e.message.length} chars`);
  assert.doesNotMatch(r.e.message, /[\u0000-\u001f\u007f-\u009f]/, "printable");
  return { e: r.e, ms, dev, events };
}

describe("answers that are not the protocol", () => {
  const cases: [string, string, RegExp][] = [
    ["malformed", "bad_answer", /initialize answer is not JSON: \{"session": "s1"/],
    ["wrong-types", "bad_answer", /device call #1 \(c1\): request\.tap\.x: /],
    ["wrong-result", "bad_answer", /initialize result\.goal: /],
    ["unknown-field", "bad_answer", /answer: .*surprise/],
    ["two-members", "bad_answer", /oneof AdbRequest\.command: only one of tap, pull may be set/],
    ["bad-call-id", "bad_answer", /answer\.device_call\.id: 1-64 of/],
    ["no-session", "bad_answer", /must name it \(session\)/],
    ["other-session", "bad_answer", /names session s2, not s1/],
    ["http-500", "http_status", /HTTP 500: 'on_or_off'\\x1b\[31m|HTTP 500: 'on_or_off'.*\[31m/],
    ["task-error", "task_failed", /initialize: RuntimeError: snapshot missing/],
    ["big-generic", "bad_answer", /device call #1 \(generic\) of \d+ bytes exceeds the limit of 1048576 bytes/],
  ];
  for (const [name, code, message] of cases) {
    test(name, async () => {
      const { e, ms, dev } = await initError(name);
      assert.equal(e.code, code, e.message);
      assert.match(e.message, message);
      assert.equal(dev.seen.length, name === "other-session" ? 1 : 0);
      assert.ok(ms < 5000, `${ms} ms`);
    });
  }
});

describe("bounded in time and size", () => {
  test("an answer that never comes: timeout after the exchange deadline", async () => {
    const { e, ms } = await initError("slow");
    assert.equal(e.code, "timeout");
    assert.match(e.message, /no answer to POST \/slow\/v1\/sessions within 800 ms/);
    assert.ok(ms >= 700 && ms < 4000, `${ms} ms`);
  });
  test("an answer that drips forever: timeout", async () => {
    const { e, ms } = await initError("drip");
    assert.equal(e.code, "timeout");
    assert.ok(ms < 4000, `${ms} ms`);
  });
  test("a 200 MiB body is cut at the limit; a declared 1 TiB one is refused unread", async () => {
    for (const name of ["huge", "huge-declared"]) {
      // A generous exchange deadline, so that the size limit (not the deadline) is what stops the read on a busy machine.
      const { e, ms } = await initError(name, { exchangeTimeoutMs: 15_000 });
      assert.equal(e.code, "bad_answer", e.message);
      assert.match(e.message, /exceeds the limit of 1048576 bytes/);
      assert.ok(ms < 15_000, `${name}: ${ms} ms`);
    }
  });
  test("an endless chain of device calls stops at maxCallsPerPhase", async () => {
    const { e, dev, events } = await initError("endless");
    assert.equal(e.code, "too_many_calls");
    assert.match(e.message, /made more than 25 device calls/);
    assert.equal(dev.seen.length, 25);
    assert.deepEqual(events.at(-1) && { ...events.at(-1), durationMs: 0, message: "" }, { kind: "phase", phase: "initialize", outcome: "too_many_calls", durationMs: 0, calls: 26, message: "" });
  });
  test("a phase past its deadline (slow answers, each within the exchange deadline): timeout", async () => {
    const { e, ms, dev } = await initError("slow-calls", { maxCallsPerPhase: 1000 }, 1);
    assert.equal(e.code, "timeout");
    assert.match(e.message, /initialize did not finish within 1000 ms|within the phase's deadline/);
    assert.ok(ms >= 900 && ms < 4000, `${ms} ms`);
    assert.ok(dev.seen.length >= 1 && dev.seen.length <= 8, `${dev.seen.length} calls`);
  });
  test("a push carries up to the content limit, beyond the plain answer limit", async () => {
    const dev = recordingDevice();
    const inst = createRemoteTaskInstance({ url: `${base}/big-push`, className: "T", timeoutSec: 10 }, { index: 0, seed: 1 }, OPTS);
    await inst.initialize(dev, new AbortController().signal);
    const cmd = dev.seen[0]!.cmd;
    assert.ok(cmd.command === "push" && cmd.content.byteLength === 2 * 1024 * 1024 && cmd.path === "/sdcard/big.bin");
    await inst.close();
  });
});

describe("device calls the farm does not carry out", () => {
  const refused: [string, RegExp][] = [
    ["install-host", /install_apk installs the host file "\/etc\/passwd", outside the task folder/],
    ["install-escape", /install_apk installs the host file "..\/..\/..\/..\/etc\/passwd", outside the task folder/],
    ["generic-serial", /generic adb command "-s" is not carried out for task code/],
    ["generic-push", /generic adb command "push" is not carried out/],
    ["emu-kill", /generic emu "kill" is not carried out/],
  ];
  for (const [name, message] of refused) {
    test(name, async () => {
      const { e, dev, events } = await initError(name);
      assert.equal(e.code, "refused_call");
      assert.match(e.message, message);
      assert.deepEqual(dev.seen, [], "nothing reached the device");
      assert.equal(events.filter((x) => x.kind === "refused").length, 1);
    });
  }
  test("a host path inside the task folder is installed from there; without a task folder, blobs only", async () => {
    const dev = recordingDevice();
    const inst = createRemoteTaskInstance({ url: `${base}/install-inside`, className: "T", timeoutSec: 10 }, { index: 0, seed: 1 }, { ...OPTS, taskDir });
    await inst.initialize(dev, new AbortController().signal);
    const cmd = dev.seen[0]!.cmd;
    assert.ok(cmd.command === "install_apk" && cmd.location.kind === "filesystem" && cmd.location.path === path.join(taskDir, "app.apk"), JSON.stringify(cmd));
    await inst.close();
    const { e } = await initError("install-inside", { taskDir: undefined });
    assert.match(e.message, /may install APKs only as blobs/);
  });
});

describe("connections and hosts", () => {
  test("a connection reset before and during the answer: unreachable", async () => {
    for (const name of ["reset-now", "reset-mid"]) {
      const { e, ms } = await initError(name);
      assert.equal(e.code, "unreachable", e.message);
      assert.equal(e.retryable, true);
      assert.ok(ms < 4000, `${ms} ms`);
    }
  });
  test("a kept-alive connection the server dropped is used again once, on a fresh connection", async () => {
    const dev = recordingDevice();
    const inst = createRemoteTaskInstance({ url: `${base}/stale`, className: "T", timeoutSec: 10 }, { index: 0, seed: 1 }, OPTS);
    const drops = staleDrops;
    await inst.initialize(dev, new AbortController().signal);
    assert.equal(dev.seen.length, 2, "each device call carried out once");
    assert.ok(staleDrops - drops >= 1, "the server dropped a reused connection");
    const s = await inst.score(dev, { final: true }, new AbortController().signal);
    assert.equal(s.success, 1, s.error);
    await inst.close();
  });
  test("nothing listening: unreachable", async () => {
    const dev = recordingDevice();
    const inst = createRemoteTaskInstance({ url: "http://127.0.0.1:1", className: "T", timeoutSec: 5 }, { index: 0, seed: 1 }, OPTS);
    await assert.rejects(inst.initialize(dev, new AbortController().signal), (e: unknown) => e instanceof TaskProtocolError && e.code === "unreachable" && /ECONNREFUSED/.test(e.message));
  });
  test("hosts off the allow-list, metadata addresses and bad refs: initialize rejects, score answers the error", async () => {
    const cases: [string, string, string[]?][] = [
      ["http://10.0.0.1:8765", "url_not_allowed"],
      ["http://169.254.169.254/", "url_not_allowed", ["*"]],
      ["http://metadata.google.internal/", "url_not_allowed", ["*"]],
      ["http://example.com/", "url_not_allowed"],
      ["ftp://127.0.0.1/", "bad_ref"],
      ["not a url", "bad_ref"],
    ];
    for (const [url, code, allowedHosts] of cases) {
      const inst = createRemoteTaskInstance({ url, className: "T", timeoutSec: 5 }, { index: 0, seed: 1 }, allowedHosts ? { allowedHosts } : {});
      await assert.rejects(inst.initialize(recordingDevice(), new AbortController().signal), (e: unknown) => e instanceof TaskProtocolError && e.code === code, url);
      const s = await inst.score(recordingDevice(), { final: true }, new AbortController().signal);
      assert.ok(s.error && s.success === undefined, url);
    }
    const listed = createRemoteTaskInstance({ url: "http://10.0.0.1:8765", className: "T", timeoutSec: 5 }, { index: 0, seed: 1 }, { allowedHosts: ["10.0.0.0/8"] });
    assert.ok(listed, "a listed range is accepted (no connection made here)");
    await listed.close();
    const badClass = createRemoteTaskInstance({ url: base, className: "a b; rm", timeoutSec: 5 }, { index: 0, seed: 1 });
    await assert.rejects(badClass.initialize(recordingDevice(), new AbortController().signal), /class must be 1-128 of/);
  });
});

describe("score never rejects", () => {
  for (const [name, message] of [
    ["score-malformed", /score answer is not JSON: nope/],
    ["score-out-of-range", /score result\.success: /],
  ] as const) {
    test(name, async () => {
      const inst = createRemoteTaskInstance({ url: `${base}/${name}`, className: "T", timeoutSec: 5 }, { index: 0, seed: 1 }, OPTS);
      const init = await inst.initialize(recordingDevice(), new AbortController().signal);
      assert.deepEqual({ ...init.params }, { n: 1 });
      const s = await inst.score(recordingDevice(), { final: true }, new AbortController().signal);
      assert.match(s.error ?? "", message);
      assert.equal(s.success, undefined);
      const again = await inst.score(recordingDevice(), { final: true }, new AbortController().signal);
      assert.match(again.error ?? "", /session failed earlier/);
      await inst.close();
    });
  }
  test("a score with details and a reward; the settings call reached the device typed; one kept-alive connection; counters", async () => {
    const dev = recordingDevice();
    const counters = createTaskProtocolCounters();
    const before = connections;
    const inst = createRemoteTaskInstance({ url: `${base}/score-ok`, className: "T", timeoutSec: 5 }, { index: 0, seed: 1, goal: "The campaign's goal" }, { ...OPTS, onEvent: counters.onEvent });
    const init = await inst.initialize(dev, new AbortController().signal);
    assert.equal(init.goal, "The campaign's goal");
    assert.deepEqual(dev.seen[0]!.cmd, { command: "settings", namespace: "global", action: { verb: "get", key: "wifi_on" } });
    const s = await inst.score(dev, { final: true, answer: "x" }, new AbortController().signal);
    assert.deepEqual(s, { success: 0.5, reward: 2, checks: [{ name: "T.is_successful", kind: "remote", passed: false, observed: '0.5 {"seen":"1"}', expected: "1" }] });
    await inst.close();
    assert.ok(connections - before <= 1, `initialize (2 exchanges), score and DELETE on one kept-alive connection (${connections - before} new)`);
    assert.deepEqual(counters.snapshot(), { calls: { "initialize settings ok": 1 }, refusals: {}, phases: { "initialize ok": 1, "score ok": 1 }, errors: 0 });
    const after = await inst.score(dev, { final: true }, new AbortController().signal);
    assert.match(after.error ?? "", /after close\(\)/);
  });
  test("the caller's signal and close() end a phase at once", async () => {
    const ac = new AbortController();
    const inst = createRemoteTaskInstance({ url: `${base}/slow`, className: "T", timeoutSec: 30 }, { index: 0, seed: 1 }, { exchangeTimeoutMs: 20_000 });
    const t0 = performance.now();
    setTimeout(() => ac.abort(), 100);
    await assert.rejects(inst.initialize(recordingDevice(), ac.signal), (e: unknown) => e instanceof TaskProtocolError && e.code === "aborted");
    assert.ok(performance.now() - t0 < 3000);
    const inst2 = createRemoteTaskInstance({ url: `${base}/slow`, className: "T", timeoutSec: 30 }, { index: 0, seed: 1 }, { exchangeTimeoutMs: 20_000 });
    const p = inst2.initialize(recordingDevice(), new AbortController().signal);
    setTimeout(() => void inst2.close(), 100);
    await assert.rejects(p, (e: unknown) => e instanceof TaskProtocolError && e.code === "closed");
  });
});
