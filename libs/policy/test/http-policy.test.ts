import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { inflateSync } from "node:zlib";
import { sleep } from "@farm/time";
import { httpPolicy, PolicyError, type ForeignBody, type WireRequest } from "../src/index.ts";
import { context, observation, rejectsWithPolicyError as rejectsWith } from "./helpers.ts";

/** Ports other developers' services use; the OS hands them out only rarely, but never take one. */
const reserved = (p: number) => p === 5037 || p === 6379 || (p >= 5554 && p <= 5585);

async function listen(server: Server): Promise<number> {
  for (;;) {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    const port = (server.address() as AddressInfo).port;
    if (!reserved(port)) return port;
    await new Promise((r) => server.close(r));
  }
}

let server: Server;
let base: string;
const received: WireRequest[] = [];

/** One route per behaviour under test. */
const routes: Record<string, (req: IncomingMessage, res: ServerResponse, body: string) => void> = {
  "/good": (_req, res, body) => {
    received.push(JSON.parse(body) as WireRequest);
    res.writeHead(200, { "content-type": "application/json", "x-policy-version": "model-7" });
    res.end(JSON.stringify({ actionType: "TOUCH", touchPosition: [0.3, 0.7] }));
  },
  "/slow": (_req, res) => {
    const t = setTimeout(() => res.end(JSON.stringify({ actionType: "LIFT", touchPosition: [0, 0] })), 2000);
    res.on("close", () => clearTimeout(t));
  },
  "/slow-body": (_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.write(`{"actionType":`);
    const t = setTimeout(() => res.end(`"LIFT","touchPosition":[0,0]}`), 2000);
    res.on("close", () => clearTimeout(t));
  },
  "/error": (_req, res) => {
    res.writeHead(500);
    res.end("model crashed: CUDA out of memory");
  },
  "/protocol-error": (_req, res) => {
    res.writeHead(503, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: "model loading\u0007 \"v2\"" }));
  },
  "/forbidden-secret": (_req, res) => {
    res.writeHead(403, { "content-type": "application/json" });
    res.end(JSON.stringify({ message: "internal-secret-4711", error: { detail: "internal-secret-4711" } }));
  },
  "/secret-action": (_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ actionType: "internal-secret-4711", touchPosition: [0, 0] }));
  },
  "/notfound": (_req, res) => {
    res.writeHead(404);
    res.end();
  },
  "/garbage": (_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end("<html>hello</html>");
  },
  "/wrong-shape": (_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ action: "tap" }));
  },
};

before(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      const route = routes[req.url ?? ""];
      if (!route || req.method !== "POST") {
        res.writeHead(405);
        res.end();
        return;
      }
      route(req, res, body);
    });
  });
  base = `http://127.0.0.1:${await listen(server)}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

test("good reply: action parsed, version from X-Policy-Version, observation and context sent", async () => {
  const p = httpPolicy(`${base}/good`, { timeoutMs: 1000 });
  assert.equal(p.version, "unknown");
  await p.reset(context(17, 3));
  const rgb = Uint8Array.from({ length: 2 * 2 * 3 }, (_, i) => i * 10);
  const action = await p.act({ ...observation(4), pixels: { width: 2, height: 2, rgb } });
  // The response's X-Policy-Version travels with its answer (issue 38: the step's policyVersion).
  const touch = { actionType: "TOUCH", touchPosition: [0.3, 0.7] };
  assert.deepEqual(action, { action: touch, given: JSON.stringify(touch), version: "model-7" });
  assert.equal(p.version, "model-7");
  const req = received.at(-1)!;
  assert.deepEqual(req.context, context(17, 3));
  assert.equal(req.observation.stepIndex, 4);
  assert.equal(req.observation.pixels?.encoding, "png");
  // The PNG holds exactly our pixels: signature, then inflate IDAT and drop the per-row filter byte.
  const png = Buffer.from(req.observation.pixels!.data, "base64");
  assert.equal(png.subarray(1, 4).toString(), "PNG");
  const idatAt = png.indexOf("IDAT");
  const idat = png.subarray(idatAt + 4, idatAt + 4 + png.readUInt32BE(idatAt - 4));
  const rows = inflateSync(idat);
  assert.deepEqual([...rows.subarray(1, 7), ...rows.subarray(8, 14)], [...rgb]);
  await p.close();
});

test("raw pixel encoding sends the RGB bytes as base64", async () => {
  const p = httpPolicy(`${base}/good`, { pixelEncoding: "rgb" });
  const rgb = Uint8Array.from([1, 2, 3]);
  await p.act({ ...observation(), pixels: { width: 1, height: 1, rgb } });
  assert.deepEqual(received.at(-1)!.observation.pixels, { width: 1, height: 1, encoding: "rgb", data: Buffer.from(rgb).toString("base64") });
});

test("slow reply → timeout", async () => {
  const started = Date.now();
  await rejectsWith(httpPolicy(`${base}/slow`, { timeoutMs: 200 }).act(observation()), "timeout", /\/slow: no answer within 200 ms before the server answered/, true);
  assert.ok(Date.now() - started < 1500);
  await rejectsWith(httpPolicy(`${base}/slow-body`, { timeoutMs: 200 }).act(observation()), "timeout", /no answer within 200 ms while reading the answer body/, true);
});

test("HTTP 500 → http_status (retryable), 404 → http_status (not retryable); a body that is not the protocol's JSON error is not shown", async () => {
  const seen: ForeignBody[] = [];
  const onForeignBody = (b: ForeignBody) => seen.push(b);
  await rejectsWith(httpPolicy(`${base}/error`, { onForeignBody }).act(observation()), "http_status", /\/error: server answered HTTP 500 \(a body of 33 bytes, not shown: only the policy protocol's \{"error": "…"\} is\); check the model server's logs/, true);
  await rejectsWith(httpPolicy(`${base}/notfound`).act(observation()), "http_status", /HTTP 404; check the URL/, false);
  assert.deepEqual(seen.map((b) => [b.kind, b.status, b.bytes, b.excerpt]), [["http_status", 500, 33, "model crashed: CUDA out of memory"]], "the worker's hook sees the body (for its local log)");
  assert.match(seen[0]!.sha256, /^[0-9a-f]{16}$/);
});

test("the policy protocol's JSON error is quoted, short and escaped", async () => {
  await rejectsWith(httpPolicy(`${base}/protocol-error`).act(observation()), "http_status", /HTTP 503: "model loading \\"v2\\""; check the model server's logs/, true);
});

test("a 403 with a secret body, or a 2xx JSON that is not an action: the secret is in no message, only in the hook", async () => {
  for (const route of ["/forbidden-secret", "/secret-action"]) {
    const seen: ForeignBody[] = [];
    await assert.rejects(httpPolicy(`${base}${route}`, { onForeignBody: (b) => seen.push(b) }).act(observation()), (e: unknown) => {
      assert.ok(e instanceof PolicyError);
      assert.doesNotMatch(e.message, /internal-secret/, route);
      return true;
    });
    assert.equal(seen.length, 1, route);
    assert.match(`${seen[0]!.excerpt} ${seen[0]!.detail ?? ""}`, /internal-secret-4711/, `${route}: the local log can tell what came back`);
  }
});

test("garbage and wrong shape → bad_response, naming the rule and not the answer's values", async () => {
  await rejectsWith(httpPolicy(`${base}/garbage`).act(observation()), "bad_response", /\/garbage: answer is not JSON \(a body of 18 bytes, not shown/, false);
  // {"action": "tap"} is a decision (PROTOCOL.md) whose action is not an object
  await rejectsWith(httpPolicy(`${base}/wrong-shape`).act(observation()), "bad_response", /answer is not a valid action: expected an object like \{"actionType":"TOUCH","touchPosition":\[0\.5,0\.5\]\}$/);
});

test("closed port → unreachable", async () => {
  const spare = createServer();
  const port = await listen(spare);
  await new Promise((r) => spare.close(r));
  await rejectsWith(httpPolicy(`http://127.0.0.1:${port}/act`, { timeoutMs: 2000 }).act(observation()), "unreachable", new RegExp(`127\\.0\\.0\\.1:${port}/act: cannot reach the server \\(ECONNREFUSED\\)`), true);
});

test("the caller's signal → aborted; close() aborts and refuses further calls", async () => {
  const ac = new AbortController();
  const p = httpPolicy(`${base}/slow`, { timeoutMs: 5000 });
  const pending = p.act(observation(), ac.signal);
  setTimeout(() => ac.abort(), 50);
  await rejectsWith(pending, "aborted", /aborted by the caller/);
  const inflight = p.act(observation());
  setTimeout(() => void p.close(), 50);
  await rejectsWith(inflight, "closed", /policy closed/);
  await rejectsWith(p.act(observation()), "closed", /after close/);
});

test("a long-lived caller signal keeps no listeners after calls finish", async () => {
  const ac = new AbortController();
  const p = httpPolicy(`${base}/good`);
  for (let i = 0; i < 3; i++) await p.act(observation(i), ac.signal);
  await rejectsWith(httpPolicy(`${base}/error`).act(observation(), ac.signal), "http_status", /HTTP 500/);
  assert.equal(getEventListeners(ac.signal, "abort").length, 0);
});

test("bad URLs are rejected at construction", () => {
  assert.throws(() => httpPolicy("not a url"), (e: unknown) => e instanceof PolicyError && e.code === "bad_spec");
  assert.throws(() => httpPolicy("ftp://x/y"), /must be an http/);
});

test("steps reuse one kept-alive connection; one the server closed meanwhile is replaced and the step sent again on a fresh one, no step fails", async () => {
  let connections = 0;
  let dropAfterAnswer = false;
  const own = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      // Closing right after the answer, without saying so, is what an idle timeout does at the worst moment.
      const socket = req.socket;
      res.end(JSON.stringify({ actionType: "LIFT", touchPosition: [0, 0] }), () => {
        if (dropAfterAnswer) setTimeout(() => socket.destroy(), 1);
      });
    });
  });
  own.on("connection", () => connections++);
  const port = await listen(own);
  try {
    const p = httpPolicy(`http://127.0.0.1:${port}/act`, { needsPixels: false });
    await p.reset(context(1));
    for (let i = 0; i < 10; i++) await p.act(observation());
    assert.equal(connections, 1, "ten steps on one connection");
    dropAfterAnswer = true;
    for (let i = 0; i < 30; i++) {
      if (i % 2 === 1) await sleep(1);
      assert.equal(((await p.act(observation())) as { actionType: string }).actionType, "LIFT");
    }
    assert.ok(connections > 1, "closed connections were replaced");
    await p.close();
  } finally {
    own.closeAllConnections();
    await new Promise((r) => own.close(r));
  }
});
