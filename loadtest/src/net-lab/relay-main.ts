/**
 * The delay relay as a process of its own, so it can run inside a namespace:
 *   ip netns exec NS node --import tsx relay-main.ts LISTEN_HOST LISTEN_PORT TO_HOST TO_PORT UP_MS DOWN_MS
 * Prints `relay listening PORT` once it listens; a `stats` line on stdin answers
 * `stats connections=N requests=M`; stops on SIGTERM or when its stdin closes (the lab's process is gone).
 */
import readline from "node:readline";
import { runUntilSignal, untilAborted } from "@farm/lifecycle";
import { startDelayRelay } from "./delay-relay.ts";

const [listenHost, listenPort, toHost, toPort, upMs, downMs] = process.argv.slice(2);
const numbers = [listenPort, toPort, upMs, downMs].map(Number);
if (!listenHost || !toHost || numbers.some((n) => !Number.isInteger(n) || n < 0)) {
  process.stderr.write("usage: relay-main.ts LISTEN_HOST LISTEN_PORT TO_HOST TO_PORT UP_MS DOWN_MS\n");
  process.exit(2);
}
await runUntilSignal(async (stop) => {
  const relay = await startDelayRelay({ listenHost, listenPort: numbers[0]!, toHost, toPort: numbers[1]!, upMs: numbers[2]!, downMs: numbers[3]! });
  process.stdout.write(`relay listening ${relay.port}\n`);
  // The lab holds our stdin: when the lab's process dies, the relay goes with it.
  const lines = readline.createInterface({ input: process.stdin });
  lines.on("line", (l) => {
    if (l.trim() === "stats") process.stdout.write(`stats connections=${relay.connections()} requests=${relay.requests()}\n`);
  });
  const orphaned = new Promise<void>((resolve) => lines.once("close", resolve));
  await Promise.race([untilAborted(stop), orphaned]);
  await relay.close();
});
