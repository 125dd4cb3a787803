/**
 * `farm bench a11y` at a small size: it reads trees at both profiles and ends with the line (the
 * `instant` figures on the line before). The forest column is `na` until the simulated device has the
 * accessibility forwarder; then it must be a number.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const FARM = path.join(REPO, "services", "cli", "bin", "farm.js");
const LINE = /^nodes=(\d+) uiautomator_p50_ms=([0-9.]+) forest_p50_ms=(na|[0-9.]+) worker_cpu_us_per_tree=([0-9.]+)$/;

test("bench a11y prints both profiles' figures and the issue's last line", { timeout: 180_000 }, async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [FARM, "bench", "a11y", "--samples", "2", "--instant-samples", "5"], { cwd: REPO, timeout: 170_000, maxBuffer: 1 << 20 });
  const lines = stdout.trim().split("\n");
  assert.match(stdout, /emulator-grpc: uiautomator dump \(exec-out\)\s+2\s+0\s/);
  assert.match(stdout, /instant: uiautomator dump \(exec-out\)\s+5\s+0\s/);
  const instant = LINE.exec((lines.at(-2) ?? "").replace(/^instant: /, ""));
  const grpc = LINE.exec(lines.at(-1) ?? "");
  assert.ok(instant && grpc, `last lines: ${lines.slice(-2).join(" | ")}`);
  assert.ok(Number(grpc[1]) > 0, "the launcher has nodes");
  assert.equal(grpc[1], instant[1], "the same screen at both profiles");
  // The emulator profile charges uiautomator's process start and quiet span; instant charges neither.
  assert.ok(Number(grpc[2]) >= 400 && Number(grpc[2]) > Number(instant[2]), `p50 ${grpc[2]} vs ${instant[2]}`);
  assert.ok(Number(grpc[4]) > 0 && Number(instant[4]) > 0);
});
