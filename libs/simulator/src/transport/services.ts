import type { DeviceBackend } from "./backend.ts";
import type { ServiceRouter } from "./connection.ts";
import { startFramebuffer } from "./framebuffer-service.ts";
import { startRawShell, startShellV2 } from "./shell-service.ts";
import { startSync } from "./sync-service.ts";

export type ServiceKind =
  | { kind: "shell"; command: string; v2: boolean }
  | { kind: "exec"; command: string }
  | { kind: "sync" }
  | { kind: "framebuffer" };

/**
 * Normalises a service string from OPEN: `shell:CMD`, `shell,v2,TERM=xterm,raw:CMD`, `exec:CMD`,
 * `sync:`, `framebuffer:`. Everything else (jdwp, reverse, root, …) is refused.
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
  return undefined;
}

export function createServiceRouter(backend: DeviceBackend): ServiceRouter {
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
    }
  };
}
