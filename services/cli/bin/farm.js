#!/usr/bin/env node
// The `farm` command: registers tsx so the TypeScript sources run directly, then hands over to main.ts.
import { fileURLToPath } from "node:url";

// A fresh clone has no node_modules: say which command installs them instead of a module-not-found trace.
const { register } = await import("tsx/esm/api").catch((e) => {
  if (e?.code !== "ERR_MODULE_NOT_FOUND") throw e;
  const root = fileURLToPath(new URL("../../..", import.meta.url));
  process.stderr.write(`farm: the farm's npm packages are not installed (tsx is missing); run: cd '${root}' && npm ci   (or bash deploy/bootstrap.sh)\n`);
  process.exit(1);
});

register();
// TypeScript that loads as CommonJS too: a policy module (`module:<file>.ts`) outside any "type": "module" package.
const { register: registerCjs } = await import("tsx/cjs/api");
registerCjs();
await import("../src/main.ts");
