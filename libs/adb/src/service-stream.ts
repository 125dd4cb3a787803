/**
 * A device service (`shell:…`) as a Duplex stream on a connection the driver owns (`openService` of @farm/adb-wire):
 * the action channel and logcat read and write it like a socket; `destroy()` closes the connection at any stage,
 * which is how a deadline cancels an open that has not finished.
 */
import { Duplex } from "node:stream";
import { openService } from "@farm/adb-wire";

export interface ServiceStream {
  /** The stream once the service started; rejects with the AdbWireError that stopped it. */
  readonly opened: Promise<Duplex>;
  destroy(): void;
}

export function serviceStream(host: string, port: number, serial: string, service: string): ServiceStream {
  let settle!: { resolve(d: Duplex): void; reject(e: Error): void };
  const opened = new Promise<Duplex>((resolve, reject) => (settle = { resolve, reject }));
  opened.catch(() => undefined);
  const sock = openService({ host, port }, serial, service, {
    started: () => settle.resolve(stream),
    data: (b) => stream.push(b),
    failed: (e) => {
      settle.reject(e);
      stream.destroy();
    },
    ended: () => stream.push(null),
  });
  const stream = new Duplex({
    read: () => undefined,
    write: (chunk: Buffer, _enc, cb) => void sock.write(chunk, cb),
    final: (cb) => {
      sock.end();
      cb();
    },
    destroy: (err, cb) => {
      sock.destroy();
      cb(err);
    },
  });
  // Closing either side closes the other: the readers listen on the stream only.
  sock.once("close", () => stream.destroy());
  return { opened, destroy: () => stream.destroy() };
}
