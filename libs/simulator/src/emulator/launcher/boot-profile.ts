/**
 * How long a boot takes and which faults to inject, for the `emulator` command (read from the
 * environment, as a launcher's fixed command line leaves no room for simulator options).
 *
 * Boot delays per latency profile, after the published figures for real emulators: a cold boot
 * 25 s or more, a boot from a snapshot 2.5–3.7 s (we take 25 000 and 3 000 ms); `instant` boots at once.
 */
import { isLatencyProfileName, type LatencyProfileName } from "../../android/system/latency.ts";

export const BOOT_DELAY_MS: Record<LatencyProfileName, { cold: number; snapshot: number }> = {
  instant: { cold: 0, snapshot: 0 },
  "emulator-adb": { cold: 25_000, snapshot: 3_000 },
  "emulator-grpc": { cold: 25_000, snapshot: 3_000 },
};

export interface EmulatorFaults {
  /** The process dies abruptly this long after boot (the adb server sees the device vanish). */
  crashAfterMs?: number;
  /** The VM stops answering (as after console `avd stop`) this long after boot. */
  hangAfterMs?: number;
  /** The foreground app crashes this long after boot. */
  appCrashAfterMs?: number;
  /** Probability that an input event is lost. */
  tapDrop?: number;
}

export interface EmulatorEnvConfig {
  profile: LatencyProfileName;
  seed: number | undefined;
  faults: EmulatorFaults;
}

export function readEmulatorEnv(env: NodeJS.ProcessEnv): EmulatorEnvConfig {
  const profile = env.FARM_EMULATOR_PROFILE ?? "instant";
  if (!isLatencyProfileName(profile)) throw new Error(`FARM_EMULATOR_PROFILE must be instant, emulator-adb or emulator-grpc, got '${profile}'`);
  let seed: number | undefined;
  if (env.FARM_EMULATOR_SEED !== undefined) {
    seed = Number(env.FARM_EMULATOR_SEED);
    if (!Number.isSafeInteger(seed)) throw new Error(`FARM_EMULATOR_SEED must be an integer, got '${env.FARM_EMULATOR_SEED}'`);
  }
  return { profile, seed, faults: parseFaults(env.FARM_EMULATOR_FAULTS ?? "") };
}

/** `crash-after-ms=5000,hang-after-ms=2000,app-crash-after-ms=3000,tap-drop=0.1`. */
export function parseFaults(spec: string): EmulatorFaults {
  const faults: EmulatorFaults = {};
  for (const part of spec.split(",").map((s) => s.trim()).filter(Boolean)) {
    const [key, raw = ""] = part.split("=", 2) as [string, string?];
    const n = Number(raw);
    const ms = (): number => {
      if (!/^\d+$/.test(raw) || n > 86_400_000) throw new Error(`FARM_EMULATOR_FAULTS: ${key} needs milliseconds (0..86400000), got '${raw}'`);
      return n;
    };
    switch (key) {
      case "crash-after-ms": faults.crashAfterMs = ms(); break;
      case "hang-after-ms": faults.hangAfterMs = ms(); break;
      case "app-crash-after-ms": faults.appCrashAfterMs = ms(); break;
      case "tap-drop":
        if (raw === "" || !(n >= 0 && n <= 1)) throw new Error(`FARM_EMULATOR_FAULTS: tap-drop needs a probability in [0, 1], got '${raw}'`);
        faults.tapDrop = n;
        break;
      default:
        throw new Error(`FARM_EMULATOR_FAULTS: unknown fault '${key}' (crash-after-ms, hang-after-ms, app-crash-after-ms, tap-drop)`);
    }
  }
  return faults;
}
