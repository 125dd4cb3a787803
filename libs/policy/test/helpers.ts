/** Shared test helpers: a minimal observation and an episode context. */
import type { EpisodeContext, Observation } from "../src/index.ts";

export function observation(stepIndex = 0): Observation {
  return { timedeltaUs: 0, orientation: 0, extras: {}, stepIndex, screen: { width: 1080, height: 1920 } };
}

export function context(seed: number, episodeIndex = 0): EpisodeContext {
  return { seed, episodeIndex, screen: { width: 1080, height: 1920 } };
}
