/**
 * `farm worker --launch N --avd NAME [--emulator PATH] [--snapshot NAME]` and their environment names:
 * the emulators this worker launches itself. Off by default (the worker attaches to what its adb server lists).
 */
import fs from "node:fs";
import path from "node:path";

export interface LaunchInput {
  /** How many emulators to launch; 0 = none. Env FARM_LAUNCH. */
  count?: number;
  /** The AVD every instance runs (read-only, shared). Env FARM_LAUNCH_AVD. */
  avd?: string;
  /** The emulator executable. Env FARM_EMULATOR; default `$ANDROID_SDK_ROOT/emulator/emulator` (or ANDROID_HOME's), else `emulator` on PATH. */
  emulator?: string;
  /** Boot from this snapshot. Env FARM_LAUNCH_SNAPSHOT. */
  snapshot?: string;
  /** Boot deadline per launch. Env FARM_LAUNCH_BOOT_TIMEOUT_MS. Default 120000. */
  bootTimeoutMs?: number;
  /** Health-check period (getStatus); a hang is 3 misses in a row. Default 5000. */
  healthIntervalMs?: number;
  /** First console port tried. Default 5554. */
  basePort?: number;
}

export interface WorkerLaunchConfig {
  count: number;
  avd: string;
  emulator: string;
  snapshot: string | undefined;
  bootTimeoutMs: number;
  healthIntervalMs: number;
  basePort: number;
}

const NAME = /^[A-Za-z0-9._-]{1,100}$/;

function int(name: string, v: number | string | undefined, dflt: number, min: number, max: number): number {
  if (v === undefined || v === "") return dflt;
  const n = typeof v === "number" ? v : Number(v);
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new RangeError(`worker config: ${name} must be an integer in ${min}..${max}, got '${String(v)}'`);
  return n;
}

/** Where an Android SDK keeps the emulator, as launchers look for it. */
function defaultEmulator(env: NodeJS.ProcessEnv): string {
  for (const root of [env.ANDROID_SDK_ROOT, env.ANDROID_HOME]) {
    if (!root) continue;
    const p = path.join(root, "emulator", "emulator");
    if (fs.existsSync(p)) return p;
  }
  return "emulator";
}

export function launchConfig(input: LaunchInput | undefined, env: NodeJS.ProcessEnv): WorkerLaunchConfig | undefined {
  const count = int("launch (FARM_LAUNCH)", input?.count ?? env.FARM_LAUNCH, 0, 0, 64);
  if (count === 0) return undefined;
  const avd = input?.avd ?? env.FARM_LAUNCH_AVD;
  if (!avd) throw new RangeError("worker config: launching emulators needs an AVD: --avd NAME (FARM_LAUNCH_AVD)");
  if (!NAME.test(avd)) throw new RangeError(`worker config: avd '${avd.slice(0, 80)}' must be 1-100 characters of A-Z a-z 0-9 . _ -`);
  const snapshot = input?.snapshot ?? (env.FARM_LAUNCH_SNAPSHOT || undefined);
  if (snapshot !== undefined && !NAME.test(snapshot)) throw new RangeError(`worker config: snapshot '${snapshot.slice(0, 80)}' must be 1-100 characters of A-Z a-z 0-9 . _ -`);
  const emulator = input?.emulator ?? (env.FARM_EMULATOR || defaultEmulator(env));
  return {
    count,
    avd,
    emulator: emulator.includes("/") ? path.resolve(emulator) : emulator,
    snapshot,
    bootTimeoutMs: int("launch bootTimeoutMs (FARM_LAUNCH_BOOT_TIMEOUT_MS)", input?.bootTimeoutMs ?? env.FARM_LAUNCH_BOOT_TIMEOUT_MS, 120_000, 1_000, 3_600_000),
    healthIntervalMs: int("launch healthIntervalMs", input?.healthIntervalMs, 5_000, 100, 600_000),
    basePort: int("launch basePort", input?.basePort, 5554, 1024, 65_000),
  };
}
