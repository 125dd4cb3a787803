/**
 * The action and observation model, after AndroidEnv (task-format.md §9): one finger, positions in [0,1]².
 */

export type ActionType = "TOUCH" | "LIFT" | "REPEAT";

export interface Action {
  actionType: ActionType;
  /** (x, y) in [0,1]²; ignored for LIFT and REPEAT but always present. */
  touchPosition: [number, number];
}

export interface Pixels {
  width: number;
  height: number;
  /** RGB, row-major, width*height*3 bytes. */
  rgb: Uint8Array;
}

/** One value of an extra as parsed from logcat, with its declared (or inferred) shape. */
export interface ExtraValue {
  /** A Python-literal or JSON value: number, string, boolean, null or nested arrays. */
  value: unknown;
  shape: number[];
}

export interface Observation {
  /** Present only when the policy or the trajectory settings ask for pixels. */
  pixels?: Pixels;
  /** Microseconds since the previous observation (0 right after reset). */
  timedeltaUs: number;
  /** 0..3: portrait 0°, landscape 90°, portrait 180°, landscape 270°. */
  orientation: 0 | 1 | 2 | 3;
  /** Extras logged since the previous step, by name. */
  extras: Record<string, ExtraValue[]>;
  /** 0 for the first observation after reset. */
  stepIndex: number;
  screen: { width: number; height: number };
  /**
   * What a learner sees with the observation (dm_env's TimeStep), set by the episode runner:
   * FIRST after reset (reward 0, discount 1), MID after a step that did not end the episode
   * (that step's reward, discount 1). The LAST time step reaches `Policy.endEpisode`.
   */
  stepType?: "FIRST" | "MID";
  reward?: number;
  discount?: number;
}

/** The end of an episode as a learner needs it: the LAST time step and the return. */
export interface EpisodeEndInfo {
  /** The last step's reward (late reward lines included). */
  reward: number;
  /** 0 when the episode terminated (the task ended it), 1 when it was truncated (limits, device trouble, …). */
  discount: number;
  /** Sum of all step rewards. */
  episodeReturn: number;
  steps: number;
  outcome: string;
  cause: string;
}

export interface EpisodeContext {
  /** Seed for this episode; a policy seeded the same way must choose the same actions on the same observations. */
  seed: number;
  episodeIndex: number;
  screen: { width: number; height: number };
}

/** A policy chooses actions. Implementations: random, scripted, module, remote (HTTP). */
export interface Policy {
  readonly name: string;
  readonly version: string;
  /** Whether `act` needs `observation.pixels`. */
  readonly needsPixels: boolean;
  /** Called at every episode start. */
  reset(ctx: EpisodeContext): Promise<void>;
  act(observation: Observation, signal?: AbortSignal): Promise<Action>;
  /** Optional: told once when the episode that began at the last reset ended (after its last step). */
  endEpisode?(end: EpisodeEndInfo): Promise<void>;
  close(): Promise<void>;
}
