/**
 * One port probe: asking the kernel for a free port (`listen(0`) or whether a port is free (listen, then close
 * at once) is written once, in @farm/net-ports. Everywhere else calls freePort / portFree / listenOnFreePort,
 * so the reserved ports and the EADDRINUSE race are handled in one place. Tests may probe on purpose.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { patternSites, withTree } from "./source-files.ts";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/**
 * A listen on port 0, a listen whose callback closes the server again within the same statement, or a second
 * list of the reserved ports (adb's 5037 compared by hand).
 */
const PORT_PROBE = /\.listen\(\s*(?:0\b|\{\s*port:\s*0\b)|\.listen\([^;]{0,200}?\.close\(|===\s*5037\b/gs;

/** `file:line` of every port probe outside libs/net-ports (non-test sources of libs, services, loadtest). */
export function portProbes(root: string): string[] {
  return patternSites(root, PORT_PROBE, (rel) => rel.startsWith("libs/net-ports/"));
}

test("no port probe outside @farm/net-ports", () => {
  assert.deepEqual(portProbes(REPO), [], "use freePort, portFree or listenOnFreePort from @farm/net-ports");
});

test("the rule catches listen(0), a listen-then-close probe and a second reserved list, not a real listener", () => {
  withTree("port-rule-", {
    "libs/x/src/a.ts": "const s = net.createServer();\ns.listen(0, \"127.0.0.1\");\n",
    "loadtest/src/b.ts": "export const free = (p: number) => new Promise((r) => {\n  srv.listen(p, \"127.0.0.1\", () =>\n    srv.close(() => r(true)));\n});\n",
    "services/y/src/c.ts": "const reserved = (p: number) => p === 5037 || p === 6379;\n",
    "libs/x/src/ok.ts": "server.listen(this.port, \"127.0.0.1\", () => resolve(true));\n",
    "libs/net-ports/src/ports.ts": "srv.listen(0, \"127.0.0.1\", () => srv.close());\n",
  }, (root) => {
    assert.deepEqual(portProbes(root).sort(), ["libs/x/src/a.ts:2", "loadtest/src/b.ts:2", "services/y/src/c.ts:1"]);
  });
});
