/**
 * The network lab (issue 30): hosts in their own namespaces reach Redis by a lab address; the delay relay
 * adds latency; a cut link is silent (a command times out, no reset arrives) and a healed one carries the
 * same connection again. Needs root and iproute2; skipped with the reason elsewhere.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";
import type { ChildProcess } from "node:child_process";
import { freePort } from "@farm/local-services";
import { sleep } from "@farm/time";
import { NetLab, labUnavailableReason, listNamespaces } from "../src/net-lab/index.ts";

const LAB_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "../src/net-lab");
const skip = await labUnavailableReason();

/** Sends `ping T` lines to a probe running in a host namespace and reads its answers. */
function prober(child: ChildProcess): (timeoutMs: number) => Promise<string> {
  const lines = readline.createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  return async (timeoutMs) => {
    child.stdin!.write(`ping ${timeoutMs}\n`);
    const next = await lines.next();
    return next.done ? "error PROBE_EXITED" : next.value;
  };
}

async function redisIn(lab: NetLab): Promise<number> {
  const port = await freePort();
  const child = lab.spawn(lab.hub, "redis-server", ["--port", String(port), "--bind", "0.0.0.0", "--protected-mode", "no", "--save", "", "--appendonly", "no"]);
  const probe = prober(lab.spawn(lab.hub, process.execPath, ["--import", "tsx", path.join(LAB_DIR, "probe-main.ts"), "127.0.0.1", String(port)], { cwd: LAB_DIR }));
  for (let i = 0; i < 100; i++) {
    if ((await probe(1000)).startsWith("pong")) return port;
    await sleep(100);
  }
  child.kill();
  throw new Error("redis-server did not start in the lab's hub");
}

test("a host reaches Redis by its lab address; the relay adds the round trip it was given", { skip, timeout: 120_000 }, async () => {
  const lab = await NetLab.create({ hosts: 2 });
  try {
    const redisPort = await redisIn(lab);
    const [h1, h2] = lab.hosts;
    const relay = await lab.relay(h1!, redisPort, 20);
    const viaRelay = prober(lab.spawn(h1!.namespace, process.execPath, ["--import", "tsx", path.join(LAB_DIR, "probe-main.ts"), h1!.hubAddress, String(relay.port)], { cwd: LAB_DIR }));
    const direct = prober(lab.spawn(h2!.namespace, process.execPath, ["--import", "tsx", path.join(LAB_DIR, "probe-main.ts"), h2!.hubAddress, String(redisPort)], { cwd: LAB_DIR }));
    const delayed: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await viaRelay(10_000);
      assert.match(r, /^pong /);
      delayed.push(Number(r.split(" ")[1]));
      assert.match(await direct(10_000), /^pong /);
    }
    // 20 ms each way: no round trip through the relay can be shorter than 40 ms.
    assert.ok(Math.min(...delayed) >= 39, `round trips through the relay: ${delayed.join(", ")} ms`);
    // Host 1 cannot reach host 2's link: each host has only its own.
    const stray = prober(lab.spawn(h1!.namespace, process.execPath, ["--import", "tsx", path.join(LAB_DIR, "probe-main.ts"), h2!.hubAddress, String(redisPort)], { cwd: LAB_DIR }));
    assert.doesNotMatch(await stray(2000), /^pong/);
  } finally {
    await lab.close();
  }
  assert.deepEqual((await listNamespaces()).filter((n) => n.startsWith(lab.runId)), [], "the lab removed its namespaces");
});

test("a cut link is silent (timeouts, no reset); after the heal the same connection answers again", { skip, timeout: 120_000 }, async () => {
  const lab = await NetLab.create({ hosts: 1 });
  try {
    const redisPort = await redisIn(lab);
    const [h1] = lab.hosts;
    const probe = prober(lab.spawn(h1!.namespace, process.execPath, ["--import", "tsx", path.join(LAB_DIR, "probe-main.ts"), h1!.hubAddress, String(redisPort)], { cwd: LAB_DIR }));
    assert.match(await probe(10_000), /^pong /);
    await lab.cut(h1!);
    assert.equal(await probe(1500), "timeout");
    assert.equal(await probe(1500), "timeout");
    await lab.heal(h1!);
    // TCP retransmits what was sent into the silence; the connection was never reset.
    let answer = "";
    for (let i = 0; i < 20 && !answer.startsWith("pong"); i++) answer = await probe(3000);
    assert.match(answer, /^pong /);
  } finally {
    await lab.close();
  }
});
