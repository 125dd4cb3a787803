/**
 * The benchmarks' settings from the environment, read through SettingsReader (@farm/config): the one module of
 * loadtest/ that reads `process.env` (`.ci/env-reads.test.ts`). Handing the whole environment on to a child
 * process is not a read and stays where the child is spawned.
 */
import { SettingsReader } from "@farm/config";

const reader = new SettingsReader("loadtest", process.env);

/** FARM_LOG_LEVEL for a benchmark's in-process farm parts and children; quiet by default so the figures stay readable. */
export function benchLogLevel(fallback = "warn"): string {
  return reader.string("logLevel", { env: "FARM_LOG_LEVEL", default: fallback });
}

/** ADB_BIN: the real `adb` client that `farm bench adb` measures beside the driver. */
export function adbBin(): string {
  return reader.string("adbBin", { env: "ADB_BIN", default: "adb" });
}

/** FARM_BENCH_PROF_DIR: a folder where each child of a benchmark writes its V8 CPU profile (unset: none). */
export function childProfileDir(): string | undefined {
  return reader.string("childProfDir", { env: "FARM_BENCH_PROF_DIR", default: undefined });
}

/** For digging into `farm bench scale`: SCALE_PROF (a CPU profile folder per host), SCALE_HOST_LOG (each host's stderr). */
export function scaleDebug(): { profDir: string | undefined; hostLog: string | undefined } {
  return {
    profDir: reader.string("profDir", { env: "SCALE_PROF", default: undefined }),
    hostLog: reader.string("hostLog", { env: "SCALE_HOST_LOG", default: undefined }),
  };
}

/** What `scale-host.ts` (one worker host of `farm bench scale` and of the net lab) is told by its parent. */
export interface ScaleHostSettings {
  redisUrl: string;
  prefix: string;
  devices: number;
  host: string;
  out: string;
  task: string;
  stepMs: number;
  jitter: number;
  settleMs: number;
  lockMs: number | undefined;
}

export function scaleHostSettings(r: SettingsReader = reader): ScaleHostSettings {
  const required = (name: string, env: string): string => r.string(name, { env, default: undefined }) ?? r.fail(`${name} (${env})`, "is not set: the parent benchmark sets it");
  const num = (name: string, env: string, max: number): number =>
    r.check(name, env, Number(r.string(name, { env, default: "0" })), (v) => {
      if (!Number.isFinite(v) || v < 0 || v > max) throw new Error(`must be a number in 0..${max}`);
    });
  const lock = r.int("lockMs", { env: "SCALE_LOCK_MS", default: 0, min: 0, max: 3_600_000 });
  return {
    redisUrl: required("redisUrl", "REDIS_URL"),
    prefix: required("prefix", "SCALE_PREFIX"),
    devices: r.int("devices", { flag: required("devices", "SCALE_DEVICES"), default: 0, min: 1, max: 100_000 }),
    host: required("host", "SCALE_HOST"),
    out: required("out", "SCALE_OUT"),
    task: required("task", "SCALE_TASK"),
    stepMs: num("stepMs", "SCALE_STEP_MS", 600_000),
    jitter: num("jitter", "SCALE_STEP_JITTER", 0.9),
    settleMs: num("settleMs", "SCALE_SETTLE_MS", 600_000),
    lockMs: lock === 0 ? undefined : lock,
  };
}
