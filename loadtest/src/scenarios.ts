/**
 * Named benchmark scenarios for `npx farm bench <name>`. Each is loaded lazily so one scenario's
 * dependencies never slow another. A scenario prints its figures and ends with one `key=value` line.
 */
export interface BenchOptions {
  /** Free-form options from the command line (`--devices 8` becomes { devices: "8" }). */
  [key: string]: string | boolean | undefined;
}

export interface Scenario {
  describe: string;
  run(opts: BenchOptions): Promise<void>;
}

export const scenarios: Record<string, () => Promise<Scenario>> = {
  adb: () => import("./bench-adb.ts").then((m) => m.scenario),
  avro: () => import("./bench-avro.ts").then((m) => m.scenario),
  chaos: () => import("./bench-chaos.ts").then((m) => m.scenario),
  export: () => import("./bench-export.ts").then((m) => m.scenario),
  farm: () => import("./bench-farm.ts").then((m) => m.scenario),
  frames: () => import("./bench-frames.ts").then((m) => m.scenario),
  reset: () => import("./bench-reset.ts").then((m) => m.scenario),
  sim: () => import("./bench-sim.ts").then((m) => m.scenario),
  soak: () => import("./bench-soak.ts").then((m) => m.scenario),
};
