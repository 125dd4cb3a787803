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
