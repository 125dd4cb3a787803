/**
 * A Redis PING probe on one long-lived connection, for the lab's checks from inside a host namespace:
 *   ip netns exec NS node --import tsx probe-main.ts HOST PORT
 * Each stdin line `ping TIMEOUT_MS` answers one stdout line: `pong MS`, `timeout`, or `error CODE`.
 * A silent link shows as `timeout` (nothing came back) rather than `error ECONNRESET` (a reset did).
 */
import net from "node:net";
import readline from "node:readline";
import { withDeadline } from "@farm/time";

const [host, portText] = process.argv.slice(2);
const port = Number(portText);
if (!host || !Number.isInteger(port) || port <= 0) {
  process.stderr.write("usage: probe-main.ts HOST PORT\n");
  process.exit(2);
}
const socket = net.connect({ host, port, noDelay: true });
let failure: string | undefined;
socket.on("error", (e: NodeJS.ErrnoException) => (failure = e.code ?? e.message));
let pending: ((reply: string) => void) | undefined;
let buffered = "";
socket.on("data", (c) => {
  buffered += c.toString();
  if (buffered.includes("\r\n") && pending) {
    buffered = "";
    pending("pong");
  }
});

async function ping(timeoutMs: number): Promise<string> {
  if (failure) return `error ${failure}`;
  const started = performance.now();
  const reply = new Promise<void>((resolve) => {
    pending = () => {
      pending = undefined;
      resolve();
    };
    socket.write("PING\r\n");
  });
  try {
    await withDeadline(reply, timeoutMs, () => new Error("timeout"));
    return `pong ${(performance.now() - started).toFixed(1)}`;
  } catch {
    pending = undefined;
    return failure ? `error ${failure}` : "timeout";
  }
}

for await (const line of readline.createInterface({ input: process.stdin })) {
  const m = /^ping (\d+)$/.exec(line.trim());
  process.stdout.write(`${m ? await ping(Number(m[1])) : "error BAD_COMMAND"}\n`);
}
socket.destroy();
