/**
 * A device service through the adb server: `host:transport:<serial>`, then the service (`shell:…`, `exec:…`,
 * `framebuffer:`), after which the socket carries the service's bytes both ways. The socket is the caller's to
 * write (once started) and destroy; destroying it is how a caller cancels.
 */
import net from "node:net";
import { AdbWireError } from "./errors.ts";
import { socketError, type ServerAddress } from "./host.ts";
import { encodeRequest, takeStatus } from "./protocol.ts";

export interface ServiceHandlers {
  /** The service runs: from now on the socket carries its data both ways. */
  started(): void;
  /** The service's data, in order. */
  data(b: Buffer): void;
  /**
   * The server refused the device (`transport`) or the service (`service`) — an AdbWireError `refused` with the
   * server's message — or the socket failed (`unreachable`, with `errno`) or closed (`closed`) before the service
   * started (`socket`).
   */
  failed(e: AdbWireError, stage: "transport" | "service" | "socket"): void;
  /** The service's stream ended (after it started). */
  ended(): void;
}

/** Connects to the adb server and starts `service` on `serial`. */
export function openService(a: ServerAddress, serial: string, service: string, h: ServiceHandlers): net.Socket {
  const sock = net.connect(a.port, a.host);
  // A caller writes short requests and waits for their answer: no Nagle delay on them.
  sock.setNoDelay(true);
  let stage: "transport" | "service" | "started" | "done" = "transport";
  let pending: Buffer = Buffer.alloc(0);
  const fail = (e: AdbWireError, at: "transport" | "service" | "socket"): void => {
    if (stage === "done") return;
    stage = "done";
    sock.destroy();
    h.failed(e, at);
  };
  let request: Buffer;
  try {
    request = encodeRequest(service);
  } catch (e) {
    // Reported like any other failure, after the caller holds the socket.
    queueMicrotask(() => fail(e as AdbWireError, "service"));
    return sock;
  }
  sock.on("connect", () => sock.write(encodeRequest(`host:transport:${serial}`)));
  sock.on("data", (b: Buffer) => {
    if (stage === "started") return h.data(b);
    pending = pending.length ? Buffer.concat([pending, b]) : b;
    while (stage === "transport" || stage === "service") {
      const s = takeStatus(pending);
      if (!s) return;
      if (!s.ok) return fail(new AdbWireError(/^unexpected|^malformed/.test(s.message) ? "protocol" : "refused", s.message), stage);
      pending = s.rest;
      if (stage === "transport") {
        stage = "service";
        sock.write(request);
      } else {
        stage = "started";
        h.started();
      }
    }
    if (stage === "started" && pending.length) h.data(pending);
    pending = Buffer.alloc(0);
  });
  sock.on("error", (e: NodeJS.ErrnoException) => fail(socketError(a, `${service} on '${serial}'`, e), "socket"));
  sock.on("close", () => {
    if (stage === "started") {
      stage = "done";
      h.ended();
    } else fail(new AdbWireError("closed", `adb server ${a.host}:${a.port} closed the connection before ${service.split(":")[0]}: started on '${serial}'`), "socket");
  });
  return sock;
}
