/**
 * Which devices have an emulator gRPC endpoint, and where: from the worker's config (serial → endpoint and
 * token) or from the emulators' discovery files (`pid_<pid>.ini` in the running-AVD folder, the emulator's
 * own mechanism: `port.serial` names the device `emulator-<port>`, `grpc.port` and `grpc.token` the endpoint),
 * or off. A device without an endpoint keeps adb for everything.
 */
import fs from "node:fs";
import path from "node:path";
import { discoveryFilePid, parseDiscovery, processAlive } from "@farm/emulator-grpc";
import { isLoopbackAddress } from "./shared-frames.ts";

export interface GrpcEndpoint {
  /** host:port of the emulator's gRPC server. */
  address: string;
  /** Bearer token when the emulator runs with -grpc-use-token. */
  token?: string;
}

export type GrpcMode = "off" | "config" | "discover";

export interface GrpcTransportConfig {
  /**
   * `discover`: the config's endpoints, then the discovery files; `config`: the config's endpoints only;
   * `off`: adb for everything. @default off
   */
  mode?: GrpcMode;
  /** serial → endpoint (e.g. emulators on another host, or started with a fixed -grpc port). */
  endpoints?: Record<string, GrpcEndpoint>;
  /** Folder of the discovery files. @default the emulator's: $XDG_RUNTIME_DIR/avd/running, else /run/user/<uid>, $HOME/.android, tmp */
  discoveryDir?: string;
  /** Deadline of one gRPC action (touch, key). @default the driver's actionTimeoutMs */
  callTimeoutMs?: number;
  /**
   * Frames through shared memory (the emulator's MMAP image transport) from emulators on this host's loopback;
   * one that cannot open the region gets pixels in the answer instead. @default true
   */
  sharedFrames?: boolean;
}

const PORT = /^\d{1,5}$/;

/** serial → endpoint of every live emulator that wrote a discovery file with a gRPC port (bounded: 4096 files). */
export function readDiscoveryFiles(dir: string): Map<string, GrpcEndpoint> {
  const found = new Map<string, GrpcEndpoint>();
  let names: string[];
  try {
    names = fs.readdirSync(dir).slice(0, 4096);
  } catch {
    return found;
  }
  for (const name of names) {
    const pid = discoveryFilePid(name);
    if (pid === undefined || !processAlive(pid)) continue;
    let ini: Map<string, string>;
    try {
      const file = path.join(dir, name);
      if (fs.statSync(file).size > 64 * 1024) continue;
      ini = parseDiscovery(fs.readFileSync(file, "utf8"));
    } catch {
      continue;
    }
    const console = ini.get("port.serial") ?? "";
    const grpcPort = ini.get("grpc.port") ?? "";
    if (!PORT.test(console) || !PORT.test(grpcPort)) continue;
    const token = ini.get("grpc.token");
    found.set(`emulator-${console}`, { address: `127.0.0.1:${grpcPort}`, ...(token ? { token } : {}) });
  }
  return found;
}

/** How long a reading of the discovery folder answers (a step asks per frame; emulators come and go in seconds). */
const DISCOVERY_TTL_MS = 2000;

/** Resolves a serial to its endpoint per the config; the discovery folder is read at most every 2 s. */
export class GrpcEndpoints {
  readonly mode: GrpcMode;
  private readonly dir: string;
  private discovered: { at: number; map: Map<string, GrpcEndpoint> } | undefined;

  constructor(private readonly cfg: GrpcTransportConfig = {}) {
    this.mode = cfg.mode ?? "off";
    if (!["off", "config", "discover"].includes(this.mode)) throw new TypeError(`adb config: grpc.mode must be off, config or discover, got ${String(this.mode)}`);
    for (const [serial, ep] of Object.entries(cfg.endpoints ?? {})) {
      if (!ep || typeof ep.address !== "string" || !/^[A-Za-z0-9.\-[\]:]+:\d{1,5}$/.test(ep.address)) throw new TypeError(`adb config: grpc endpoint of ${serial} must be host:port, got ${JSON.stringify(ep?.address)}`);
    }
    // The running-AVD folder depends on the caller's environment (discoveryDirectory(env)): the service's config decides it.
    if (this.mode === "discover" && !cfg.discoveryDir) throw new TypeError("adb config: grpc.mode discover needs grpc.discoveryDir (the emulators' running-AVD folder, e.g. discoveryDirectory(env) of @farm/emulator-grpc)");
    this.dir = cfg.discoveryDir ?? "";
  }

  resolve(serial: string): GrpcEndpoint | undefined {
    if (this.mode === "off") return undefined;
    const own = this.cfg.endpoints && Object.hasOwn(this.cfg.endpoints, serial) ? this.cfg.endpoints[serial] : undefined;
    if (own || this.mode === "config") return own;
    const now = performance.now();
    if (!this.discovered || now - this.discovered.at > DISCOVERY_TTL_MS) this.discovered = { at: now, map: readDiscoveryFiles(this.dir) };
    return this.discovered.map.get(serial);
  }

  /** Whether frames from this endpoint should try shared memory (enabled, and the emulator is on this host). */
  sharesFrames(ep: GrpcEndpoint): boolean {
    return this.cfg.sharedFrames !== false && isLoopbackAddress(ep.address);
  }

  /** Forgets the last reading of the discovery folder (an emulator was (re)started). */
  refresh(): void {
    this.discovered = undefined;
  }
}
