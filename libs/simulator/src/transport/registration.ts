import net from "node:net";

/**
 * Asks an adb server to attach the emulator listening on `devicePort` (`host:emulator:PORT`, §5).
 * The server never replies to this request; it closes the socket and connects to 127.0.0.1:PORT.
 * Resolves true when the request was delivered, false when no server answered.
 */
export function registerEmulator(adbHost: string, adbPort: number, devicePort: number): Promise<boolean> {
  return new Promise((resolve) => {
    const body = `host:emulator:${devicePort}`;
    const socket = net.connect({ host: adbHost, port: adbPort });
    let delivered = false;
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(delivered);
    };
    const timer = setTimeout(finish, 1000);
    socket.once("connect", () => {
      socket.write(body.length.toString(16).padStart(4, "0") + body, () => {
        delivered = true;
        socket.end();
      });
    });
    socket.once("error", finish);
    socket.once("close", finish);
    socket.on("data", () => {});
  });
}

/**
 * The adb server's device list (`host:devices`): serial → state (`device`, `offline`…). Rejects when the
 * server refuses, does not answer within `timeoutMs`, or is not there.
 */
export function listedDevices(adbHost: string, adbPort: number, timeoutMs = 2000): Promise<Map<string, string>> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: adbHost, port: adbPort });
    let buf = Buffer.alloc(0);
    const fail = (e: Error): void => {
      socket.destroy();
      reject(e);
    };
    socket.setTimeout(timeoutMs, () => fail(new Error(`adb server ${adbHost}:${adbPort} did not answer host:devices within ${timeoutMs} ms`)));
    socket.once("error", fail);
    socket.once("close", () => fail(new Error(`adb server ${adbHost}:${adbPort} closed the connection before listing its devices`)));
    socket.once("connect", () => socket.write("000chost:devices"));
    socket.on("data", (b: Buffer) => {
      buf = Buffer.concat([buf, b]);
      if (buf.length >= 4 && buf.subarray(0, 4).toString() !== "OKAY") return fail(new Error(`adb server refused host:devices: ${buf.toString()}`));
      if (buf.length < 8) return;
      const len = parseInt(buf.subarray(4, 8).toString(), 16);
      if (buf.length < 8 + len) return;
      resolve(parseDeviceList(buf.subarray(8, 8 + len).toString()));
      socket.destroy();
    });
  });
}

function parseDeviceList(text: string): Map<string, string> {
  const devices = new Map<string, string>();
  for (const line of text.split("\n")) {
    const [serial, state] = line.split("\t");
    if (serial && state) devices.set(serial, state);
  }
  return devices;
}
