import { sleep } from "@farm/time";
import { listDevices } from "@farm/adb-wire";

/**
 * A device counts itself online once it has answered the handshake, but the server may still list
 * it as `offline` for a moment; callers expect `adb devices` to show every device ready.
 */
export async function waitListedAsDevice(adbPort: number, adbHost: string, serials: string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const listed = await listDevices({ host: adbHost, port: adbPort }, { timeoutMs: 2000 }).catch(() => new Map<string, string>());
    const notReady = serials.filter((s) => listed.get(s) !== "device");
    if (notReady.length === 0) return;
    if (Date.now() > deadline) {
      throw new Error(`adb server on ${adbHost}:${adbPort} does not list ${notReady.join(", ")} as 'device' after ${timeoutMs} ms`);
    }
    await sleep(20);
  }
}
