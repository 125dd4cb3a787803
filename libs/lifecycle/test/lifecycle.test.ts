import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Releasers } from "../src/index.ts";

const HERE = path.dirname(fileURLToPath(import.meta.url));

test("Releasers: last added released first; a failure is collected and the rest still run; idempotent", async () => {
  const order: string[] = [];
  const r = new Releasers();
  r.add("redis", () => void order.push("redis"));
  r.add("adb", async () => {
    order.push("adb");
    throw new Error("adb would not stop");
  });
  r.add(() => void order.push("worker"));
  const seen: string[] = [];
  const failures = await r.releaseAll({ onError: (f) => seen.push(f.what) });
  assert.deepEqual(order, ["worker", "adb", "redis"]);
  assert.deepEqual(failures.map((f) => [f.what, f.error.message]), [["adb", "adb would not stop"]]);
  assert.deepEqual(seen, ["adb"]);
  assert.equal(await r.releaseAll(), failures);
  assert.deepEqual(order, ["worker", "adb", "redis"]);
});

test("Releasers: releaseAllOrThrow names every failed step; a step added after release runs at once", async () => {
  const r = new Releasers();
  r.add("a", () => Promise.reject("plain string"));
  r.add("b", () => {
    throw new Error("b broke");
  });
  await assert.rejects(r.releaseAllOrThrow(), (e: AggregateError) => /release failed: b: b broke; a: plain string/.test(e.message) && e.errors.length === 2);
  let late = false;
  r.add("late", () => {
    late = true;
  });
  await new Promise((res) => setTimeout(res, 20));
  assert.equal(late, true);
});

/** A child that runs main under runUntilSignal and prints what happened. */
function child(): Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }> {
  const script = `
    import { runUntilSignal, untilAborted } from ${JSON.stringify(path.join(HERE, "../src/index.ts"))};
    const result = await runUntilSignal(async (stop) => {
      const alive = setInterval(() => {}, 1000); // a service's open server keeps the process alive the same way
      console.log("ready");
      await untilAborted(stop);
      clearInterval(alive);
      console.log("draining " + stop.reason);
      await new Promise((r) => setTimeout(r, Number(process.env.DRAIN_MS)));
      return "drained";
    }, { onSignal: (s) => console.log("signal " + s) });
    console.log(result);
  `;
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { env: { ...process.env, DRAIN_MS: process.env.TEST_DRAIN_MS ?? "0" }, stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    p.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("ready\n") && !out.includes("sent")) {
        out += "sent\n";
        p.kill("SIGTERM");
        if (process.env.TEST_DRAIN_MS) setTimeout(() => p.kill("SIGINT"), 500);
      }
    });
    p.on("exit", (code, signal) => resolve({ code, signal, out }));
  });
}

test("runUntilSignal: the first signal aborts main, which drains and returns; a second one exits at once", async () => {
  const first = await child();
  assert.equal(first.code, 0, first.out);
  assert.match(first.out, /signal SIGTERM\ndraining SIGTERM\ndrained\n/);
  process.env.TEST_DRAIN_MS = "60000";
  try {
    const second = await child();
    assert.equal(second.code, 130, second.out);
    assert.doesNotMatch(second.out, /drained/);
  } finally {
    delete process.env.TEST_DRAIN_MS;
  }
});
