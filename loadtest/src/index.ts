/**
 * @module @farm/loadtest
 * Benchmarks that measure the farm's figures side by side in one run; see scenarios.ts.
 */
export type { ChaosOptions, ChaosResult } from "./chaos.ts";
export { scenarios, type Scenario, type BenchOptions, type ScenarioEntry, type BenchOptionSpec } from "./scenarios.ts";
