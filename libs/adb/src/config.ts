/** Driver configuration: validated once, with defaults and units in the names. */
import { silentLogger, type Logger } from "@farm/log";
import type { ScreenTreeEvent } from "./a11y/types.ts";

/** One observed driver call, for metrics (error counts by kind, latency). */
export interface AdbCallEvent {
  serial?: string;
  /** Operation, e.g. `shell`, `step:start_activity`, `action:tap`, `logcat:reopen`. */
  op: string;
  status: string;
  durationMs: number;
}

export interface AdbEvents {
  onCall?(ev: AdbCallEvent): void;
  onDeviceState?(ev: { serial: string; state: string }): void;
  /** One screen-tree read (`Device.screenTree`): source, outcome, time, size. */
  onScreenTree?(ev: ScreenTreeEvent): void;
}

export interface AdbDriverConfig {
  /** adb server host. Default 127.0.0.1. */
  host?: string;
  /** adb server port. Default 5037. */
  port?: number;
  /** Deadline for a step command whose request says 0. Default 120000 (AndroidEnv's 120 s). */
  defaultTimeoutMs?: number;
  /** Deadline for small driver-internal queries (device list, orientation, activity…). Default 10000. */
  queryTimeoutMs?: number;
  /** Deadline per action on the action channel. Default 5000. */
  actionTimeoutMs?: number;
  /** Logcat reopen attempts after the stream ends while still wanted. Default 5. */
  logcatReopenAttempts?: number;
  /** First logcat reopen backoff, doubled per attempt (capped at 2000). Default 100. */
  logcatReopenBackoffMs?: number;
  /** Folders searched for `mpm` APKs by file name. Default none. */
  apkDirs?: string[];
  /** Device folder for temporary files (install, push). Default /data/local/tmp. */
  deviceTmpDir?: string;
  /** The `adb` executable, for the emulator console (`adb emu …`: snapshots without gRPC). Default `adb` on PATH. */
  adbBin?: string;
  logger?: Logger;
  events?: AdbEvents;
}

export interface ResolvedAdbConfig {
  host: string;
  port: number;
  defaultTimeoutMs: number;
  queryTimeoutMs: number;
  actionTimeoutMs: number;
  logcatReopenAttempts: number;
  logcatReopenBackoffMs: number;
  apkDirs: string[];
  deviceTmpDir: string;
  adbBin: string;
  logger: Logger;
  events: AdbEvents;
}

function positiveInt(name: string, v: number | undefined, dflt: number, min = 1): number {
  if (v === undefined) return dflt;
  if (!Number.isFinite(v) || !Number.isInteger(v) || v < min) throw new RangeError(`adb config: ${name} must be an integer >= ${min}, got ${String(v)}`);
  return v;
}

/** Validates and fills defaults. Throws RangeError/TypeError on a bad config (a programming error, not device trouble). */
export function resolveConfig(c: AdbDriverConfig = {}): ResolvedAdbConfig {
  const host = c.host ?? "127.0.0.1";
  if (typeof host !== "string" || host.trim() === "") throw new TypeError("adb config: host must be a non-empty string");
  const port = positiveInt("port", c.port, 5037);
  if (port > 65535) throw new RangeError(`adb config: port must be <= 65535, got ${port}`);
  const deviceTmpDir = c.deviceTmpDir ?? "/data/local/tmp";
  if (!deviceTmpDir.startsWith("/")) throw new TypeError("adb config: deviceTmpDir must be an absolute device path");
  return {
    host,
    port,
    defaultTimeoutMs: positiveInt("defaultTimeoutMs", c.defaultTimeoutMs, 120_000),
    queryTimeoutMs: positiveInt("queryTimeoutMs", c.queryTimeoutMs, 10_000),
    actionTimeoutMs: positiveInt("actionTimeoutMs", c.actionTimeoutMs, 5_000),
    logcatReopenAttempts: positiveInt("logcatReopenAttempts", c.logcatReopenAttempts, 5, 0),
    logcatReopenBackoffMs: positiveInt("logcatReopenBackoffMs", c.logcatReopenBackoffMs, 100, 0),
    apkDirs: [...(c.apkDirs ?? [])],
    deviceTmpDir: deviceTmpDir.replace(/\/+$/, "") || "/",
    adbBin: c.adbBin || "adb",
    logger: c.logger ?? silentLogger,
    events: c.events ?? {},
  };
}
