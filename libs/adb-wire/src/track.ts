/**
 * `host:track-devices`: one long-lived connection on which the server sends its whole device list (length-prefixed,
 * as `host:devices`) at once and again on every change. The caller gets each list and, once, the end.
 */
import net from "node:net";
import { AdbWireError } from "./errors.ts";
import { socketError, type ServerAddress } from "./host.ts";
import { encodeRequest, parseDeviceList, takeLengthPrefixed, takeStatus } from "./protocol.ts";

export interface DeviceListHandlers {
  /** The server's current list, serial → state (the first right after the request is accepted). */
  list(devices: Map<string, string>): void;
  /** The tracking ended (server gone, refused, bad bytes); `started` says whether a list had been accepted. Not called after `close()`. */
  ended(e: AdbWireError, started: boolean): void;
}

export interface DeviceListTracking {
  /** Stops tracking: the connection is destroyed and no handler is called again. */
  close(): void;
}

export function trackDeviceLists(a: ServerAddress, h: DeviceListHandlers): DeviceListTracking {
  const sock = net.connect(a.port, a.host);
  let accepted = false;
  let done = false;
  let pending: Buffer = Buffer.alloc(0);
  const end = (e: AdbWireError): void => {
    if (done) return;
    done = true;
    sock.destroy();
    h.ended(e, accepted);
  };
  sock.once("connect", () => sock.write(encodeRequest("host:track-devices")));
  sock.on("error", (e: NodeJS.ErrnoException) => end(socketError(a, "host:track-devices", e)));
  sock.once("close", () => end(new AdbWireError("closed", `adb server ${a.host}:${a.port} ended host:track-devices`)));
  sock.on("data", (b: Buffer) => {
    pending = pending.length ? Buffer.concat([pending, b]) : b;
    while (!done) {
      if (!accepted) {
        const s = takeStatus(pending);
        if (!s) return;
        if (!s.ok) return end(new AdbWireError("refused", `adb server ${a.host}:${a.port} refused host:track-devices: ${s.message}`));
        accepted = true;
        pending = s.rest;
        continue;
      }
      const p = takeLengthPrefixed(pending);
      if (!p) return;
      if ("error" in p) return end(new AdbWireError("protocol", `adb server ${a.host}:${a.port} sent a device list with a bad length on host:track-devices`));
      pending = p.rest;
      h.list(parseDeviceList(p.text));
    }
  });
  return {
    close() {
      done = true;
      sock.destroy();
    },
  };
}
