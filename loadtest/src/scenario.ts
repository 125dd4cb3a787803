/** What a benchmark scenario is (its own file so the scenarios can import it without importing the list of scenarios). */
export interface BenchOptions {
  /** The scenario's declared options (scenarios.ts) by flag name: `--devices 8` becomes { devices: "8" }. */
  [key: string]: string | boolean | undefined;
}

export interface Scenario {
  /** Options arrive checked by `farm bench`'s parser, by flag name (`--max-steps 5` → { "max-steps": "5" }). */
  run(opts: BenchOptions): Promise<void>;
}
