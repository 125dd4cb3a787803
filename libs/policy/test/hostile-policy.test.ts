/**
 * Hostile remote policies: URLs aimed at metadata / link-local addresses or outside the allow-list
 * (hand-written and fast-check generated addresses), DNS answers pointing there (rebinding), and
 * hostile answers from a real local server (huge bodies, lying content-length, slow-loris, redirects,
 * wrong types, control characters, random JSON). Every act() ends within its deadline in an action or
 * a PolicyError whose message is short, printable and free of credentials.
 */
import assert from "node:assert/strict";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import fc from "fast-check";
import { hostAllowList, httpPolicy, isPolicyError, PolicyError, UrlNotAllowedError } from "../src/index.ts";
import { observation } from "./helpers.ts";

const counts: Record<string, number> = {};
const count = (k: string, n = 1) => (counts[k] = (counts[k] ?? 0) + n);
after(() => console.log(`hostile policy cases: ${JSON.stringify(counts)}`));

/** act() with a hard deadline in the test itself; resolves to the action or the PolicyError. */
async function actBounded(url: string, opts: Parameters<typeof httpPolicy>[1] = {}, deadlineMs = 5000): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`act() on ${url} still running after ${deadlineMs} ms`)), deadlineMs)));
  try {
    const p = httpPolicy(url, { timeoutMs: 1500, ...opts });
    return await Promise.race([p.act(observation()).catch((e: unknown) => e), deadline]);
  } catch (e) {
    if (isPolicyError(e)) return e;
    throw e;
  } finally {
    clearTimeout(timer);
  }
}

function assertCleanError(e: unknown, code?: string): PolicyError {
  assert.ok(isPolicyError(e), `expected a PolicyError, got ${String(e)}`);
  if (code) assert.equal(e.code, code, e.message);
  assert.ok(e.message.length < 600, `message of ${e.message.length} chars: ${e.message.slice(0, 200)}`);
  assert.doesNotMatch(e.message, /[\u0000-\u001f\u007f-\u009f\u202a-\u202e]/, "printable message");
  assert.doesNotMatch(e.message, /hunter2|s3cr3t/, "no credentials");
  return e;
}

describe("allow-list of remote policy hosts", () => {
  const refused = [
    "http://169.254.169.254/latest/meta-data/",
    "http://169.254.170.2/v2/credentials",
    "http://[fe80::1]/",
    "http://[fd00:ec2::254]/",
    "http://100.100.100.200/latest/meta-data",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://metadata/computeMetadata/v1/",
    "http://instance-data/latest/",
    "http://2852039166/", // 169.254.169.254 as one number
    "http://0xa9.0xfe.0xa9.0xfe/",
    "http://[::ffff:169.254.169.254]/",
    "http://0.0.0.0:8000/act",
    "http://[::]:8000/act",
    "http://10.0.0.1/act",
    "http://192.168.1.1/act",
    "http://example.com/act",
    "http://169.254.169.254.nip.io/",
    "http://localhost.evil.example/act",
    "https://user:hunter2@evil.example/act?token=s3cr3t",
  ];
  for (const url of refused) {
    test(`refused by default: ${url}`, () => {
      assert.throws(() => httpPolicy(url), (e: unknown) => assertCleanError(e, "url_not_allowed") !== undefined);
      count("url refused (hand-written)");
    });
  }

  test("loopback is allowed by default; listed names, ranges and * widen it; metadata needs an explicit entry", () => {
    for (const url of ["http://127.0.0.1:1/act", "http://localhost:1/act", "http://[::1]:1/act", "http://127.9.9.9/act", "http://0x7f.1/act"]) {
      assert.doesNotThrow(() => httpPolicy(url), url);
    }
    assert.doesNotThrow(() => httpPolicy("http://models.example/act", { allowedHosts: ["models.example"] }));
    assert.doesNotThrow(() => httpPolicy("http://a.models.example/act", { allowedHosts: ["*.models.example"] }));
    assert.throws(() => httpPolicy("http://models.example/act", { allowedHosts: ["*.models.example"] }), /allow-list/);
    assert.doesNotThrow(() => httpPolicy("http://10.1.2.3/act", { allowedHosts: ["10.0.0.0/8"] }));
    assert.doesNotThrow(() => httpPolicy("http://example.com/act", { allowedHosts: ["*"] }));
    assert.throws(() => httpPolicy("http://169.254.169.254/", { allowedHosts: ["*"] }), /metadata/);
    assert.throws(() => httpPolicy("http://metadata.google.internal/", { allowedHosts: ["*", "*.internal"] }), /metadata/);
    assert.doesNotThrow(() => httpPolicy("http://169.254.169.254/", { allowedHosts: ["169.254.169.254"] }));
    assert.doesNotThrow(() => httpPolicy("http://metadata.google.internal/", { allowedHosts: ["metadata.google.internal"] }));
    assert.throws(() => httpPolicy("http://127.0.0.1/", { allowedHosts: ["10.0.0.0/99"] }), (e: unknown) => isPolicyError(e) && e.code === "bad_spec");
    assert.throws(() => httpPolicy("http://127.0.0.1/", { allowedHosts: ["http://x"] }), /not a host name/);
    count("allow-list rules", 13);
  });

  test("DNS rebinding: every resolved address is checked, at connection time", async () => {
    const allow = hostAllowList(["policy.example", "*"]);
    assert.throws(() => allow.checkAddress("policy.example", "169.254.169.254"), UrlNotAllowedError);
    assert.throws(() => allow.checkAddress("policy.example", "fe80::1"), UrlNotAllowedError);
    assert.throws(() => allow.checkAddress("policy.example", "::ffff:169.254.169.254"), UrlNotAllowedError);
    assert.doesNotThrow(() => allow.checkAddress("policy.example", "10.0.0.7"));
    // `localhost` must stay on loopback.
    assert.throws(() => hostAllowList([]).checkAddress("localhost", "10.0.0.7"), /not loopback/);
    // The lookup handed to http.request refuses before any connection.
    const err = await new Promise<Error | null>((resolve) => hostAllowList([]).lookup("localhost", { all: true }, (e) => resolve(e)));
    assert.equal(err, null, "localhost resolves to loopback here");
    count("rebinding", 6);
  });

  test("fast-check: any address in a metadata / link-local range is refused under any allow-list without an explicit entry", () => {
    const v4LinkLocal = fc.tuple(fc.nat(255), fc.nat(255)).map(([a, b]) => `169.254.${a}.${b}`);
    const v6LinkLocal = fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 4, maxLength: 4 }).map((g) => `fe80::${g.map((x) => x.toString(16)).join(":")}`);
    const lists = fc.array(fc.constantFrom("*", "*.example", "models.example", "10.0.0.0/8", "fd00::/8", "192.168.0.0/16"), { maxLength: 4 });
    fc.assert(
      fc.property(fc.oneof(v4LinkLocal, v6LinkLocal, fc.constant("100.100.100.200"), fc.constant("0.0.0.0")), lists, (addr, list) => {
        const allow = hostAllowList(list);
        assert.throws(() => allow.checkHost(addr.includes(":") ? `[${addr}]` : addr), UrlNotAllowedError);
        assert.throws(() => allow.checkAddress("models.example", addr), UrlNotAllowedError);
        count("metadata ranges (fast-check)");
      }),
      { numRuns: 200, seed: 11 },
    );
    fc.assert(
      fc.property(fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255)), ([a, b, c]) => {
        assert.doesNotThrow(() => hostAllowList([]).checkHost(`127.${a}.${b}.${c}`));
        count("loopback (fast-check)");
      }),
      { numRuns: 50, seed: 12 },
    );
  });
});

describe("hostile answers from a real server", () => {
  let server: Server;
  let base: string;
  let redirectsFollowed = 0;
  const routes = new Map<string, (res: ServerResponse) => void>([
    ["/huge", (res) => {
      res.writeHead(200, { "content-type": "application/json" });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      let sent = 0;
      const pump = () => {
        while (sent < 50 * 1024 * 1024 && res.write(chunk)) sent += chunk.length;
        if (sent < 50 * 1024 * 1024) res.once("drain", pump);
        else res.end("{}");
      };
      res.on("close", () => (sent = Infinity));
      pump();
    }],
    ["/lying-length", (res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": "1000000000000" });
      res.write("{");
    }],
    ["/slowloris", (res) => {
      res.writeHead(200, { "content-type": "application/json" });
      const t = setInterval(() => res.write(" "), 100);
      res.on("close", () => clearInterval(t));
    }],
    ["/redirect", (res) => {
      res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" });
      res.end();
    }],
    ["/redirect-local", (res) => {
      res.writeHead(307, { location: "/good" });
      res.end();
    }],
    ["/good", (res) => {
      redirectsFollowed++;
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"actionType":"LIFT"}');
    }],
    ["/error-page", (res) => {
      res.writeHead(500, { "content-type": "text/html" });
      res.end(`\u001b[2J\u001b]0;pwned\u0007<html>${"secret internal stack trace ".repeat(5000)}</html>`);
    }],
    ["/nan", (res) => {
      res.writeHead(200);
      res.end('{"actionType":"TOUCH","touchPosition":[1e999,-1e999]}');
    }],
    ["/nan-literal", (res) => {
      res.writeHead(200);
      res.end('{"actionType":"TOUCH","touchPosition":[NaN,0.5]}');
    }],
    ["/proto", (res) => {
      res.writeHead(200);
      res.end('{"__proto__":{"actionType":"TOUCH"},"touchPosition":[0.5,0.5]}');
    }],
    ["/version-bomb", (res) => {
      res.writeHead(200, { "x-policy-version": "v".repeat(10_000) });
      res.end('{"actionType":"LIFT"}');
    }],
  ]);
  let randomBody = "";

  before(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        const route = routes.get(req.url ?? "");
        if (route) return route(res);
        res.writeHead(200);
        res.end(randomBody);
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  test("huge bodies, lying lengths, slow-loris, redirects, NaN, error pages", async () => {
    const rss0 = process.memoryUsage().rss;
    assertCleanError(await actBounded(`${base}/huge`), "bad_response");
    assert.ok(process.memoryUsage().rss - rss0 < 100 * 1024 * 1024, "a 50 MB answer is not held in memory");
    assertCleanError(await actBounded(`${base}/lying-length`), "bad_response");
    const t0 = Date.now();
    assertCleanError(await actBounded(`${base}/slowloris`, { timeoutMs: 800 }), "timeout");
    assert.ok(Date.now() - t0 < 3000, "the deadline holds against a trickle");
    const r = assertCleanError(await actBounded(`${base}/redirect`), "http_status");
    assert.match(r.message, /redirects are not followed/);
    redirectsFollowed = 0;
    assertCleanError(await actBounded(`${base}/redirect-local`), "http_status");
    assert.equal(redirectsFollowed, 0);
    const page = assertCleanError(await actBounded(`${base}/error-page`), "http_status");
    assert.ok(page.message.length < 300, `excerpt kept short: ${page.message.length}`);
    assertCleanError(await actBounded(`${base}/nan`), "bad_response");
    assertCleanError(await actBounded(`${base}/nan-literal`), "bad_response");
    assertCleanError(await actBounded(`${base}/proto`), "bad_response");
    const p = httpPolicy(`${base}/version-bomb`);
    await p.act(observation());
    assert.ok(p.version.length <= 128);
    assertCleanError(await actBounded(`http://user:hunter2@127.0.0.1:1/act?token=s3cr3t`), "unreachable");
    count("hostile answers", 12);
  });

  test("fast-check: 200 random answers end in a valid action or a clean bad_response", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
          fc.record({ actionType: fc.oneof(fc.constantFrom("TOUCH", "LIFT", "REPEAT", "touch", ""), fc.anything()), touchPosition: fc.oneof(fc.array(fc.double(), { maxLength: 3 }), fc.anything()) }).map((v) => JSON.stringify(v) ?? "null"),
          fc.string({ maxLength: 300 }),
          fc.constantFrom("[".repeat(60_000), "[".repeat(100_000), '{"actionType":"TOUCH","touchPosition":[0.5,0.5]}', "\u0000\u001b[31m"),
        ),
        async (body) => {
          randomBody = body;
          const out = await actBounded(`${base}/random`);
          if (isPolicyError(out)) assertCleanError(out, "bad_response");
          else {
            const a = out as { actionType: string; touchPosition: [number, number] };
            assert.ok(["TOUCH", "LIFT", "REPEAT"].includes(a.actionType));
            assert.ok(a.touchPosition.every((x) => Number.isFinite(x) && x >= 0 && x <= 1));
          }
          count("random answers (fast-check)");
        },
      ),
      { numRuns: 200, seed: 13 },
    );
  });
});
