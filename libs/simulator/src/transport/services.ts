import { sleep, type DeviceBackend } from "./backend.ts";
import type { AdbStream } from "./stream.ts";
import type { ServiceRouter } from "./connection.ts";
import { startFramebuffer } from "./framebuffer-service.ts";
import { startRawShell, startShellV2 } from "./shell-service.ts";
import { startSync } from "./sync-service.ts";

export type ServiceKind =
  | { kind: "shell"; command: string; v2: boolean }
  | { kind: "exec"; command: string }
  | { kind: "sync" }
  | { kind: "framebuffer" }
  | { kind: "restart"; mode: "root" | "unroot" };

/**
 * Normalises a service string from OPEN: `shell:CMD`, `shell,v2,TERM=xterm,raw:CMD`, `exec:CMD`,
 * `sync:`, `framebuffer:`, `root:`, `unroot:`. Everything else (jdwp, reverse, …) is refused.
 */
export function parseService(service: string): ServiceKind | undefined {
  if (service.startsWith("shell:")) return { kind: "shell", command: service.slice(6), v2: false };
  if (service.startsWith("shell,")) {
    const colon = service.indexOf(":");
    if (colon < 0) return undefined;
    const options = service.slice(6, colon).split(",");
    return { kind: "shell", command: service.slice(colon + 1), v2: options.includes("v2") };
  }
  if (service.startsWith("exec:")) return { kind: "exec", command: service.slice(5) };
  if (service === "sync:") return { kind: "sync" };
  if (service === "framebuffer:") return { kind: "framebuffer" };
  if (service === "root:") return { kind: "restart", mode: "root" };
  if (service === "unroot:") return { kind: "restart", mode: "unroot" };
  return undefined;
}

/** How long after answering `root:`/`unroot:` adbd goes away (it restarts once the reply is out). */
const ADBD_RESTART_DELAY_MS = 50;

/**
 * `root:` / `unroot:` as adbd answers them: one line, the stream closes, and when adbd restarts the
 * transport drops (`onAdbdRestart`), so `adb root`'s wait-for-disconnect and wait-for-device end.
 */
function startRestart(backend: DeviceBackend, mode: "root" | "unroot", stream: AdbStream, onAdbdRestart: () => void): void {
  const r = backend.restartAdbd!(mode);
  stream.write(r.message);
  void stream.drained().then(async () => {
    stream.close();
    if (!r.restart) return;
    await sleep(ADBD_RESTART_DELAY_MS);
    onAdbdRestart();
  });
}

export function createServiceRouter(backend: DeviceBackend, onAdbdRestart: () => void = () => {}): ServiceRouter {
  return (service) => {
    const parsed = parseService(service);
    if (!parsed) return undefined;
    switch (parsed.kind) {
      case "shell":
        return parsed.v2
          ? (s) => startShellV2(backend, parsed.command, s)
          : (s) => startRawShell(backend, parsed.command, s);
      case "exec":
        // exec: never gets an interactive shell; an empty command simply ends.
        return (s) => (parsed.command.trim() ? startRawShell(backend, parsed.command, s) : s.close());
      case "sync":
        return (s) => startSync(backend, s);
      case "framebuffer":
        return (s) => startFramebuffer(backend, s);
      case "restart":
        return backend.restartAdbd ? (s) => startRestart(backend, parsed.mode, s, onAdbdRestart) : undefined;
    }
  };
}
