/**
 * Hostile HTTP requests against the real scheduler API (real Redis): hand-written attacks (missing
 * token on every route of an exposed server, the queue UI through a login cookie, DNS rebinding Host
 * names, cross-site form posts, bad percent-encodings, wrong methods, oversized and malformed bodies)
 * and fast-check requests of random method × path × headers × body. Every request has a deadline; no
 * answer may be a 500, and the server must still answer afterwards.
 */
import { test, before, after, describe } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import fc from "fast-check";
import { startRedis, type LocalRedis } from "@farm/local-services";
import { silentLogger } from "@farm/log";
import { loadSchedulerConfig } from "../src/config.ts";
import { runScheduler, type RunningScheduler } from "../src/main.ts";
import { uniquePrefix, TASKS_DIR } from "./helpers.ts";

const TOKEN = "hostile-token-0123456789";
let redis: LocalRedis;
/** Token set, bound to 0.0.0.0: reachable beyond loopback. */
let exposed: RunningScheduler;
/** No token, loopback. */
let local: RunningScheduler;
const counts: Record<string, number> = {};
const count = (k: string, n = 1) => (counts[k] = (counts[k] ?? 0) + n);

before(async () => {
  redis = await startRedis();
  exposed = await runScheduler(loadSchedulerConfig({ redisUrl: redis.url, prefix: uniquePrefix(), host: "0.0.0.0", port: 0, token: TOKEN, tasks: [TASKS_DIR] }, {}), { log: silentLogger });
  local = await runScheduler(loadSchedulerConfig({ redisUrl: redis.url, prefix: uniquePrefix(), port: 0, tasks: [TASKS_DIR], allowedHosts: "farm.internal" }, {}), { log: silentLogger });
});
after(async () => {
  await exposed?.close();
  await local?.close();
  await redis?.close();
  console.log(`hostile HTTP cases: ${JSON.stringify(counts)}`);
});

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One raw request (any Host, any path bytes http allows) with a 10 s deadline. */
function request(server: RunningScheduler, o: { method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer }): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port: server.http.port,
        method: o.method ?? "GET",
        path: o.path,
        // An explicit length: Node sends DELETE/OPTIONS bodies unframed otherwise.
        headers: { host: `127.0.0.1:${server.http.port}`, ...(o.body !== undefined ? { "content-length": String(Buffer.byteLength(o.body)) } : {}), ...o.headers },
        setHost: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error(`no answer within 10 s to ${o.method ?? "GET"} ${o.path}`)));
    req.on("error", reject);
    req.end(o.body);
  });
}

const bearer = { authorization: `Bearer ${TOKEN}` };

describe("exposed server with a token: every route needs it", () => {
  test("reads, the queue UI and its API need the token; /healthz and /login do not", async () => {
    for (const path of ["/campaigns", "/campaigns/x", "/ui", "/ui/api/queues", "/ui/static/x.js", "/nope"]) {
      const r = await request(exposed, { path });
      assert.equal(r.status, 401, `${path}: ${r.status} ${r.body}`);
      assert.match(r.body, /UNAUTHORIZED/);
      count("auth");
    }
    assert.equal((await request(exposed, { path: "/campaigns", headers: bearer })).status, 200);
    assert.equal((await request(exposed, { path: "/campaigns", headers: { authorization: `Bearer ${TOKEN}x` } })).status, 401);
    assert.equal((await request(exposed, { path: "/campaigns", headers: { authorization: `Basic ${TOKEN}` } })).status, 401);
    assert.equal((await request(exposed, { path: "/healthz" })).status, 200);
    assert.equal((await request(exposed, { path: "/metrics" })).status, 200);
    assert.equal((await request(exposed, { path: "/login" })).status, 200);
    count("auth", 7);
  });

  test("a browser is sent to /login, gets an HttpOnly cookie, and the queue UI and its buttons work with it", async () => {
    let r = await request(exposed, { path: "/ui", headers: { accept: "text/html" } });
    assert.equal(r.status, 303);
    assert.equal(r.headers.location, "/login?next=%2Fui");
    const form = (token: string, next: string) => `token=${encodeURIComponent(token)}&next=${encodeURIComponent(next)}`;
    const formHeaders = { "content-type": "application/x-www-form-urlencoded" };
    r = await request(exposed, { method: "POST", path: "/login", headers: formHeaders, body: form("wrong-token-wrong-token", "/ui") });
    assert.equal(r.status, 401);
    assert.equal(r.headers["set-cookie"], undefined);
    r = await request(exposed, { method: "POST", path: "/login", headers: formHeaders, body: form(TOKEN, "//evil.example/x") });
    assert.equal(r.status, 303);
    assert.equal(r.headers.location, "/", "no open redirect");
    const setCookie = r.headers["set-cookie"]?.[0] ?? "";
    assert.match(setCookie, /HttpOnly/i);
    assert.match(setCookie, /SameSite=Strict/i);
    const cookie = setCookie.split(";")[0]!;
    r = await request(exposed, { path: "/ui", headers: { cookie, accept: "text/html" } });
    assert.equal(r.status, 200);
    assert.match(r.body, /<html/i);
    r = await request(exposed, { path: "/ui/api/queues", headers: { cookie } });
    assert.equal(r.status, 200);
    // A UI button (same origin): allowed with the cookie; the same request from another site: refused.
    const origin = `http://127.0.0.1:${exposed.http.port}`;
    r = await request(exposed, { method: "PUT", path: "/ui/api/queues/episodes/pause", headers: { cookie, origin } });
    assert.ok(r.status < 400, `UI button: ${r.status} ${r.body}`);
    await request(exposed, { method: "PUT", path: "/ui/api/queues/episodes/resume", headers: { cookie, origin } });
    r = await request(exposed, { method: "PUT", path: "/ui/api/queues/episodes/pause", headers: { cookie, origin: "http://evil.example" } });
    assert.equal(r.status, 403);
    assert.match(r.body, /FOREIGN_ORIGIN/);
    r = await request(exposed, { method: "POST", path: "/logout", headers: { cookie } });
    assert.equal(r.status, 303);
    assert.equal((await request(exposed, { path: "/ui/api/queues", headers: { cookie } })).status, 401, "logged out");
    assert.equal((await request(exposed, { path: "/ui", headers: { cookie: "farm_session=" + "A".repeat(43) } })).status, 401);
    count("login", 12);
  });
});

describe("loopback server without a token", () => {
  test("DNS rebinding: a foreign Host is refused; loopback names and configured hosts are served", async () => {
    for (const host of ["evil.example", "evil.example:80", "127.0.0.1.evil.example", "", "a b", "[::1", "localhost@evil.example"]) {
      const r = await request(local, { path: "/campaigns", headers: { host } });
      assert.equal(r.status, host === "" || host === "a b" || host === "[::1" || host === "localhost@evil.example" ? (r.status === 400 ? 400 : 403) : 403, `Host ${host}: ${r.status}`);
      count("host");
    }
    for (const host of ["localhost", `localhost:${local.http.port}`, "127.0.0.1", "[::1]:1", "farm.internal:8420", "LOCALHOST"]) {
      const r = await request(local, { path: "/campaigns", headers: { host } });
      assert.equal(r.status, 200, `Host ${host}: ${r.status} ${r.body}`);
      count("host");
    }
  });

  test("CSRF: state changes from a foreign Origin or a cross-site fetch are refused; same origin works", async () => {
    const cancel = (headers: Record<string, string>) => request(local, { method: "POST", path: "/campaigns/nope/cancel", headers });
    for (const origin of ["http://evil.example", "null", "http://127.0.0.1.evil.example", "not a url", `http://localhost.evil.example:${local.http.port}`]) {
      const r = await cancel({ origin, "content-type": "application/x-www-form-urlencoded" });
      assert.equal(r.status, 403, `Origin ${origin}: ${r.status}`);
      count("csrf");
    }
    assert.equal((await cancel({ "sec-fetch-site": "cross-site" })).status, 403);
    assert.equal((await cancel({ origin: `http://127.0.0.1:${local.http.port}` })).status, 404, "same origin reaches the route");
    assert.equal((await cancel({})).status, 404, "no Origin (curl, the CLI) reaches the route");
    count("csrf", 3);
  });
});

describe("malformed requests get 4xx, never 500", () => {
  const cases: { name: string; method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer; status: number }[] = [
    { name: "bad percent-encoding in an id", path: "/campaigns/%E0%A4%A", status: 400 },
    { name: "lone percent", path: "/campaigns/%", status: 400 },
    { name: "percent-encoded NUL", path: "/campaigns/%00", status: 404 },
    { name: "encoded slash and dots", path: "/campaigns/..%2F..%2Fetc", status: 404 },
    { name: "prototype name as id", path: "/campaigns/__proto__", status: 404 },
    { name: "constructor as id", path: "/campaigns/constructor", status: 404 },
    { name: "very long id", path: `/campaigns/${"a".repeat(4000)}`, status: 404 },
    { name: "bad JSON", method: "POST", path: "/campaigns", headers: { "content-type": "application/json" }, body: "{not json", status: 400 },
    { name: "JSON scalar", method: "POST", path: "/campaigns", headers: { "content-type": "application/json" }, body: "42", status: 400 },
    { name: "JSON with __proto__", method: "POST", path: "/campaigns", headers: { "content-type": "application/json" }, body: '{"__proto__":{"x":1},"taskId":"classic_2048","episodes":1}', status: 400 },
    { name: "huge numbers", method: "POST", path: "/campaigns", headers: { "content-type": "application/json" }, body: '{"taskId":"classic_2048","episodes":1e400}', status: 400 },
    { name: "body over 1 MiB", method: "POST", path: "/campaigns", headers: { "content-type": "application/json" }, body: `{"a":"${"x".repeat(1_100_000)}"}`, status: 413 },
    { name: "bad charset", method: "POST", path: "/campaigns", headers: { "content-type": "application/json; charset=klingon" }, body: "{}", status: 415 },
    { name: "no content type", method: "POST", path: "/campaigns", body: "{}", status: 400 },
    { name: "DELETE a collection", method: "DELETE", path: "/campaigns", status: 405 },
    { name: "PUT a campaign", method: "PUT", path: "/campaigns/x", status: 405 },
    { name: "GET a cancel", path: "/campaigns/x/cancel", status: 405 },
    { name: "POST /healthz", method: "POST", path: "/healthz", status: 405 },
    { name: "PATCH /metrics", method: "PATCH", path: "/metrics", status: 405 },
    { name: "bad limit", path: "/campaigns?limit=1e400", status: 200 },
    { name: "limit array", path: "/campaigns?limit=1&limit=2", status: 200 },
    { name: "query percent garbage", path: "/campaigns?limit=%ZZ", status: 200 },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const r = await request(local, { method: c.method ?? "GET", path: c.path, headers: c.headers ?? {}, body: c.body });
      assert.equal(r.status, c.status, `${c.name}: ${r.status} ${r.body.slice(0, 300)}`);
      if (r.status >= 400) assert.match(JSON.parse(r.body).error.code, /^[A-Z_]+$/);
      count("malformed");
    });
  }
});

describe("fast-check: random requests", () => {
  const pathPart = fc.oneof(
    fc.constantFrom("campaigns", "ui", "api", "queues", "healthz", "metrics", "login", "logout", "cancel", "__proto__", "constructor", "..", ".", "%", "%2", "%ZZ", "%E0%A4%A", "%00", "%2F", "%C0%AF", "%FF", "x"),
    fc.stringMatching(/^[A-Za-z0-9._~%-]{0,30}$/),
  );
  const reqArb = fc.record({
    method: fc.constantFrom("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "PROPFIND"),
    parts: fc.array(pathPart, { minLength: 0, maxLength: 5 }),
    query: fc.option(fc.stringMatching(/^[A-Za-z0-9=&%._-]{0,40}$/), { nil: undefined }),
    contentType: fc.constantFrom(undefined, "application/json", "application/x-www-form-urlencoded", "text/plain", "application/json; charset=utf-16", "multipart/form-data; boundary=x"),
    body: fc.oneof(fc.constant(undefined), fc.json(), fc.string({ maxLength: 200 }), fc.constantFrom("{", "[", '{"__proto__":1}', "null", "1e999", '"\\ud800"')),
    origin: fc.constantFrom(undefined, "http://evil.example", "null", "http://127.0.0.1"),
    host: fc.constantFrom(undefined, "evil.example", "localhost", "[::1]"),
    auth: fc.constantFrom(undefined, "Bearer x", `Bearer ${TOKEN}`, "Basic Zm9vOmJhcg==", "Bearer " + "a".repeat(5000)),
  });
  for (const [name, server] of [["loopback", () => local], ["exposed", () => exposed]] as const) {
    test(`${name}: 150 random requests, none answered with 500, none unanswered`, async () => {
      await fc.assert(
        fc.asyncProperty(reqArb, async (q) => {
          const headers: Record<string, string> = {};
          if (q.contentType) headers["content-type"] = q.contentType;
          if (q.origin) headers.origin = q.origin;
          if (q.host) headers.host = q.host;
          if (q.auth) headers.authorization = q.auth;
          const path = `/${q.parts.join("/")}${q.query !== undefined ? `?${q.query}` : ""}`;
          const body = q.body === undefined || q.method === "GET" || q.method === "HEAD" ? undefined : typeof q.body === "string" ? q.body : JSON.stringify(q.body);
          const r = await request(server(), { method: q.method, path, headers, body });
          assert.ok(r.status >= 200 && r.status < 500, `${q.method} ${path} ${JSON.stringify(headers)} → ${r.status} ${r.body.slice(0, 200)}`);
          count(`fast-check ${name}`);
        }),
        { numRuns: 150, seed: 7, verbose: 1 },
      );
      assert.equal((await request(server(), { path: "/healthz" })).status, 200, "still serving");
    });
  }
});
