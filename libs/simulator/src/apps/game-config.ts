/** Reading typed values from RL_TASK_GAME_CONFIG with defaults and bounds. */

export function configNumber(config: Readonly<Record<string, unknown>>, key: string, fallback: number, opts: { min?: number; max?: number; integer?: boolean } = {}): number {
  const v = config[key];
  if (typeof v !== "number" || !Number.isFinite(v)) return fallback;
  if (opts.integer && !Number.isInteger(v)) return fallback;
  if (opts.min !== undefined && v < opts.min) return fallback;
  if (opts.max !== undefined && v > opts.max) return fallback;
  return v;
}

/** `{"seed": N}` (any integer, negatives included) or the app's fixed default. */
export function configSeed(config: Readonly<Record<string, unknown>>, fallback: number): number {
  return configNumber(config, "seed", fallback, { integer: true });
}
