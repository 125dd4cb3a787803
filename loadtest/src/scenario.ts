/** What a benchmark scenario is (its own file so the scenarios can import it without importing the list of scenarios). */
export interface BenchOptions {
  /** Free-form options from the command line (`--devices 8` becomes { devices: "8" }). */
  [key: string]: string | boolean | undefined;
}

export interface Scenario {
  describe: string;
  run(opts: BenchOptions): Promise<void>;
}
