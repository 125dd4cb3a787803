/**
 * @module @farm/config
 * The one way the farm's services compile their configuration: for each setting, the explicit value
 * (a flag or a programmatic option) wins over the environment variable, which wins over the default;
 * the result is validated once, at start-up, and a bad value fails with the setting's name, its
 * environment variable and what is allowed.
 *
 *   const r = new SettingsReader("worker", process.env);      // only a service's config module passes process.env
 *   const port = r.int("metricsPort", { flag: o.metricsPort, env: "FARM_METRICS_PORT", default: 9465, min: 0, max: 65_535 });
 *   const mode = r.oneOf("grpc", ["discover", "config", "off"], { env: "FARM_GRPC", default: "discover" });
 *
 * Libraries never read `process.env`: they take values as parameters (`.ci/env-reads.test.ts`).
 */
export { ConfigError, SettingsReader, type Environment, type Setting } from "./settings-reader.ts";
export { intInRange } from "./int-text.ts";
