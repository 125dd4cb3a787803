#!/usr/bin/env node
// The `farm` command: registers tsx so the TypeScript sources run directly, then hands over to main.ts.
import { register } from "tsx/esm/api";

register();
await import("../src/main.ts");
