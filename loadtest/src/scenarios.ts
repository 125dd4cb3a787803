/**
 * Named benchmark scenarios for `npx farm bench <name>`. Each is loaded lazily so one scenario's
 * dependencies never slow another. A scenario prints its figures and ends with one `key=value` line.
 */
import type { Scenario } from "./scenario.ts";

export type { BenchOptions, Scenario } from "./scenario.ts";

export const scenarios: Record<string, () => Promise<Scenario>> = {
  adb: () => import("./bench-adb.ts").then((m) => m.scenario),
  avro: () => import("./bench-avro.ts").then((m) => m.scenario),
  farm: () => import("./bench-farm.ts").then((m) => m.scenario),
  sim: () => import("./bench-sim.ts").then((m) => m.scenario),
};
