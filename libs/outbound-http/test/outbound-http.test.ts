/** The host guard with the caller's errors and words, and an answer read up to its bound, on a loopback server. */
import assert from "node:assert/strict";
import http from "node:http";
import { test } from "node:test";
import { FarmError } from "@farm/errors";
import { listenOnFreePort } from "@farm/net-ports";
import { hostGuard, readBoundedAnswer, redactUrl, type BoundedAnswer } from "../src/index.ts";

class Refused extends FarmError<"refused"> {
  constructor(message: string) {
    super("refused", message);
  }
}
const guard = (entries: string[]) =>
  hostGuard(entries, { refused: (m) => new Refused(m), badEntry: (m) => new RangeError(`entry ${m}`), notListed: "is not on the test list", addHint: "TEST_HOSTS", where: "t.yaml" });

test("the caller's errors and words: refusals name where, the host, why, the list and how to add a host", () => {
  const g = guard(["models.example", "*.corp.example", "10.0.0.0/8"]);
  for (const ok of ["localhost", "127.0.0.5", "[::1]", "models.example", "a.corp.example", "10.9.8.7"]) g.checkHost(ok);
  assert.throws(() => g.checkHost("other.example"), (e: unknown) => e instanceof Refused && /^t\.yaml: host "other\.example" is not on the test list; allowed: loopback, models\.example, \*\.corp\.example, 10\.0\.0\.0\/8 \(add it to TEST_HOSTS\)$/.test(e.message));
  assert.throws(() => g.checkHost("corp.example"), Refused, "a suffix entry is not its own bare name");
  // Metadata: never through `*`, only when named exactly.
  assert.throws(() => guard(["*"]).checkHost("169.254.169.254"), /link-local \/ cloud metadata address/);
  assert.throws(() => guard(["*"]).checkHost("metadata.google.internal"), /cloud metadata name/);
  guard(["169.254.169.254"]).checkHost("169.254.169.254");
  // An allowed name is checked again on what it resolves to.
  assert.throws(() => guard(["*"]).checkAddress("evil.example", "169.254.169.254"), /DNS rebinding/);
  assert.throws(() => guard([]).checkAddress("localhost", "192.0.2.1"), /resolves to 192\.0\.2\.1, which is not loopback/);
  g.checkAddress("models.example", "192.0.2.1");
});

test("bad entries name themselves through the caller's error", () => {
  assert.throws(() => guard(["10.0.0.0/40"]), /^RangeError: entry '10\.0\.0\.0\/40' has a prefix longer than the address$/);
  assert.throws(() => guard(["name/8"]), /entry 'name\/8' is not an address range/);
  assert.throws(() => guard(["bad host!"]), /entry 'bad host!' is not a host name, address, range, '\*\.suffix' or '\*'/);
});

test("the lookup refuses a name resolving to a disallowed address when connecting", async () => {
  const g = guard([]);
  await new Promise<void>((resolve) =>
    g.lookup("localhost", { all: true }, (err) => {
      assert.equal(err, null);
      resolve();
    }),
  );
});

test("redactUrl keeps no user info or query values", () => {
  assert.equal(redactUrl("https://u:secret@h.example/p?key=abc&x=1"), "https://***@h.example/p?key=***&x=***");
  assert.equal(redactUrl("not a url"), "(unparseable URL)");
});

test("an answer is read up to its bound: whole, cut while streaming, refused by its declared length", async () => {
  const server = http.createServer((req, res) => {
    if (req.url === "/declared") {
      res.writeHead(200, { "content-length": "5000" });
      res.end("x".repeat(5000));
    } else if (req.url === "/streamed") {
      res.writeHead(200);
      res.write("a".repeat(600));
      res.end("b".repeat(600));
    } else res.end("small");
  });
  await listenOnFreePort(server);
  const port = (server.address() as { port: number }).port;
  const get = (path: string, max: number) =>
    new Promise<BoundedAnswer>((resolve, reject) => http.get(`http://127.0.0.1:${port}${path}`, { agent: false }, (res) => readBoundedAnswer(res, max, resolve, reject)).on("error", reject));
  try {
    assert.deepEqual(
      (({ status, text, tooLarge, size }) => ({ status, text, tooLarge, size }))(await get("/", 100)),
      { status: 200, text: "small", tooLarge: false, size: 5 },
    );
    const declared = await get("/declared", 1000);
    assert.equal(declared.tooLarge, true);
    assert.equal(declared.size, 5000);
    assert.equal(declared.text, "");
    const streamed = await get("/streamed", 1000);
    assert.equal(streamed.tooLarge, true);
    assert.equal(streamed.text.length, 1000, "cut at the bound");
  } finally {
    server.close();
    server.closeAllConnections();
  }
});
