/**
 * Where a host's screen trees come from (`--trees`, FARM_TREES): `uiautomator` (the default: `uiautomator dump`
 * on every read), `forwarder` (AndroidEnv's accessibility forwarder on every device, its APK installed where the
 * package is missing) or `auto` (the forwarder where the device already has it, uiautomator elsewhere).
 *
 * With the forwarder, the host runs one A11yForwarderHub (closed with the host) and gives the driver this
 * ForestSource in front of it. `prepare(device)` at bind: install if needed, the enabling broadcasts, then wait
 * for the device's stream. Anything after that which drops the stream (a reboot, a recovery, a snapshot load
 * that brings back a device without the forwarder's flags) is noticed by the next read: that read goes to
 * uiautomator and the forwarder is enabled again in the background. A device whose forwarder cannot be had
 * keeps working on uiautomator: one `a11y:forwarder-fallback` log line and one
 * `farm_a11y_forwarder_fallbacks_total{reason}` per device and fall, never per retry (retries run quietly, at
 * most every `retryMs`; a forwarder that comes back says so once: `a11y:forwarder-restored`).
 */
import fs from "node:fs";
import path from "node:path";
import { A11yForwarderHub, FORWARDER_PACKAGE, type Device, type ForestSource, type ScreenTree, type ScreenTreeFailure, type TreeLimits } from "@farm/adb";
import { coerceError } from "@farm/errors";
import type { Logger } from "@farm/log";
import { pollUntil } from "@farm/time";
import { terminalSafe } from "@farm/terminal-text";
import type { DeviceTreesConfig } from "./trees-config.ts";

/** Why a device's trees come from uiautomator (farm_a11y_forwarder_fallbacks_total's reasons). */
export type ForwarderFallback = "not_installed" | "apk_missing" | "install_failed" | "enable_failed" | "no_stream" | "stream_lost";

export interface DeviceTreesHooks {
  logger: Logger;
  /** A refused forwarder stream (the hub's onRefused). */
  onRefused?: (reason: string) => void;
  /** A device fell back to uiautomator. */
  onFallback?: (reason: ForwarderFallback) => void;
  /** Quiet retries after a fall: at most one per device this often. Default 30000. */
  retryMs?: number;
}

interface DeviceState {
  device: Pick<Device, "serial" | "shell">;
  /** `forwarder` once its stream came; `fallback` while reads go to uiautomator. */
  mode: "forwarder" | "fallback";
  /** This fall was logged and counted (reset when the forwarder serves again). */
  said: boolean;
  /** A fall no quiet retry mends (no package, no APK, the install failed): until the device is bound again. */
  permanent: boolean;
  /** A re-enable under way (one at a time). */
  enabling: Promise<void> | undefined;
  lastTry: number;
}

const PERMANENT: ReadonlySet<ForwarderFallback> = new Set(["not_installed", "apk_missing", "install_failed"]);

/** The host's forwarder set-up: one hub, each device's state (`createDeviceTrees`). */
export class DeviceTrees implements ForestSource {
  readonly hub: A11yForwarderHub;
  private readonly devices = new Map<string, DeviceState>();
  private readonly retryMs: number;
  private closed = false;

  constructor(
    readonly config: DeviceTreesConfig,
    private readonly hooks: DeviceTreesHooks,
  ) {
    this.hub = new A11yForwarderHub({ logger: hooks.logger });
    this.hub.onRefused = (reason) => hooks.onRefused?.(reason);
    this.retryMs = hooks.retryMs ?? 30_000;
  }

  /**
   * Installs (`forwarder`, when the package is missing), enables and waits for the device's stream. Never
   * throws: a device without a forwarder is one log line and reads trees by uiautomator. Bounded by the
   * device calls' deadlines and `forwarderConnectMs`.
   */
  async prepare(device: Pick<Device, "serial" | "shell" | "installedPackages" | "execute">): Promise<"forwarder" | "uiautomator"> {
    if (this.closed) return "uiautomator";
    const state: DeviceState = { device, mode: "fallback", said: false, permanent: false, enabling: undefined, lastTry: Date.now() };
    this.devices.set(device.serial, state);
    const pkgs = await device.installedPackages({ timeoutMs: 15_000 }).catch((e: unknown) => ({ status: "adb_error", message: coerceError(e).message }));
    if (!Array.isArray(pkgs)) return this.fall(state, "enable_failed", `listing packages: ${pkgs.message}`);
    if (!pkgs.includes(FORWARDER_PACKAGE)) {
      if (this.config.trees === "auto") return this.fall(state, "not_installed", `${FORWARDER_PACKAGE} is not installed (--trees auto installs nothing; --trees forwarder installs --forwarder-apk)`);
      const apk = this.config.forwarderApk;
      if (!fs.existsSync(apk)) return this.fall(state, "apk_missing", `${FORWARDER_PACKAGE} is not installed and the forwarder APK ${apk} does not exist (--forwarder-apk, FARM_FORWARDER_APK)`);
      const r = await device
        .execute({ timeoutSec: 120, cmd: { command: "install_apk", location: { kind: "filesystem", path: apk, declaredPath: path.basename(apk) } } })
        .catch((e: unknown) => ({ status: "adb_error", message: coerceError(e).message }));
      if (r.status !== "ok") return this.fall(state, "install_failed", `installing ${apk}: ${r.status}: ${r.message}`);
      this.hooks.logger.info({ event: "a11y:forwarder-installed", serial: device.serial, apk }, "accessibility forwarder installed");
    }
    const ok = await this.enable(state);
    return ok === true ? "forwarder" : this.fall(state, ok.reason, ok.detail);
  }

  /** Enables the forwarder and waits for its stream; true, or why not. */
  private async enable(state: DeviceState): Promise<true | { reason: ForwarderFallback; detail: string }> {
    const serial = state.device.serial;
    state.lastTry = Date.now();
    const r = await this.hub.enable(state.device, { timeoutMs: 15_000 }).catch((e: unknown) => ({ status: "adb_error", message: coerceError(e).message }));
    if (r.status !== "ok") return { reason: "enable_failed", detail: r.message };
    const came = await pollUntil(() => this.closed || this.hub.serves(serial), { timeoutMs: this.config.forwarderConnectMs, intervalMs: 25 });
    if (came !== true || this.closed) return { reason: "no_stream", detail: `no forwarder stream within ${this.config.forwarderConnectMs} ms of the enabling broadcasts` };
    const restored = state.said;
    state.mode = "forwarder";
    state.said = false;
    if (restored) this.hooks.logger.info({ event: "a11y:forwarder-restored", serial }, "the accessibility forwarder serves this device again");
    else this.hooks.logger.info({ event: "a11y:forwarder-ready", serial }, "screen trees come from the accessibility forwarder");
    return true;
  }

  /** Reads go to uiautomator; said once per fall (a log line and the metric), never per retry. */
  private fall(state: DeviceState, reason: ForwarderFallback, detail: string): "uiautomator" {
    state.mode = "fallback";
    if (PERMANENT.has(reason)) state.permanent = true;
    if (state.said) return "uiautomator";
    state.said = true;
    this.hooks.onFallback?.(reason);
    this.hooks.logger.warn({ event: "a11y:forwarder-fallback", serial: state.device.serial, reason, detail: terminalSafe(detail.slice(0, 500)) }, "screen trees of this device come from uiautomator");
    return "uiautomator";
  }

  /** The device's stream serves reads; when it dropped, the forwarder is enabled again in the background (this read: uiautomator). */
  serves(serial: string): boolean {
    if (this.hub.serves(serial)) return true;
    const state = this.devices.get(serial);
    if (!state || this.closed || state.enabling) return false;
    const lost = state.mode === "forwarder";
    if (!lost && (state.permanent || Date.now() - state.lastTry < this.retryMs)) return false;
    state.enabling = this.enable(state)
      .then((ok) => {
        if (ok !== true) this.fall(state, lost ? "stream_lost" : ok.reason, ok.detail);
      })
      .finally(() => {
        state.enabling = undefined;
      });
    return false;
  }

  read(serial: string, timeoutMs: number, limits: TreeLimits): Promise<Omit<ScreenTree, "durationMs"> | ScreenTreeFailure> {
    return this.hub.read(serial, timeoutMs, limits);
  }

  /** The device left the host: forget it (its port stays bound on the hub for when it comes back). */
  forget(serial: string): void {
    this.devices.delete(serial);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.devices.values()].map((s) => s.enabling));
    await this.hub.close();
  }
}

/** The host's tree source: undefined for `uiautomator` (no hub, today's behaviour). */
export function createDeviceTrees(config: DeviceTreesConfig, hooks: DeviceTreesHooks): DeviceTrees | undefined {
  return config.trees === "uiautomator" ? undefined : new DeviceTrees(config, hooks);
}
