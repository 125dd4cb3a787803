/**
 * A TCP relay that adds a fixed one-way delay in each direction: the lab's stand-in for a WAN link,
 * since this kernel has no netem. Each chunk is forwarded `upMs` (client to server) or `downMs` (back) after
 * it arrived — whole milliseconds, a timer's grain, so a round trip of R ms is split ⌈R/2⌉ up, ⌊R/2⌋ down; chunks of one
 * direction keep their order (equal delays), and back-pressure is left to the sockets' buffers, which
 * is what a long fat pipe does too. Closing one side closes the other after the same delay.
 */
import net from "node:net";

export interface DelayRelay {
  port: number;
  /** Connections relayed so far. */
  connections(): number;
  /**
   * Client-to-server writes relayed so far: each is a request (or a pipeline sent at once) the server
   * answers, so per episode this counts the round trips a host's Redis clients make.
   */
  requests(): number;
  close(): Promise<void>;
}

export function startDelayRelay(opts: { listenHost: string; listenPort: number; toHost: string; toPort: number; upMs: number; downMs: number }): Promise<DelayRelay> {
  const sockets = new Set<net.Socket>();
  let count = 0;
  let requests = 0;
  const after = (ms: number) => (fn: () => void): void => {
    if (ms > 0) setTimeout(fn, ms).unref();
    else fn();
  };
  const pipe = (from: net.Socket, to: net.Socket, later: (fn: () => void) => void): void => {
    from.on("data", (chunk) => later(() => to.destroyed || to.write(chunk)));
    from.on("end", () => later(() => to.end()));
    from.on("error", () => later(() => to.destroy()));
    from.on("close", () => later(() => to.destroy()));
  };
  const server = net.createServer({ noDelay: true }, (client) => {
    count++;
    const upstream = net.connect({ host: opts.toHost, port: opts.toPort, noDelay: true });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
    }
    client.on("data", () => requests++);
    pipe(client, upstream, after(opts.upMs));
    pipe(upstream, client, after(opts.downMs));
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.listenPort, opts.listenHost, () => {
      resolve({
        port: (server.address() as net.AddressInfo).port,
        connections: () => count,
        requests: () => requests,
        close: () =>
          new Promise<void>((done) => {
            for (const s of sockets) s.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}
