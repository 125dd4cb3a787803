/**
 * The action and observation model, after AndroidEnv (task-format.md §9): one finger, positions in [0,1]²;
 * and for GUI agents a goal, the screen as an element list and AndroidWorld's JSON actions (ui-action.ts).
 */
import type { GoalStatus, UiAction } from "./ui-action.ts";

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
  /** The episode's goal (the task's description, or the campaign's goal for this episode). */
  goal?: string;
  /** The screen as elements, when the policy needs them (`needsElements`) or the step's a11y is recorded. */
  elements?: UiElement[];
  /** What became of the previous step's answer (absent on FIRST). */
  previous?: StepOutcome;
}

/**
 * One element of the screen an agent may act on: a visible node of the accessibility tree that is actionable
 * or carries text. Names after AndroidWorld's UIElement; `index` is what `click {index}` points at.
 */
export interface UiElement {
  index: number;
  class_name: string;
  text: string;
  content_description: string;
  hint_text: string;
  resource_id: string;
  package_name: string;
  /** [left, top, right, bottom] in screen pixels. */
  bounds: [number, number, number, number];
  is_clickable: boolean;
  is_long_clickable: boolean;
  is_editable: boolean;
  is_scrollable: boolean;
  is_checkable: boolean;
  is_checked: boolean;
  is_focused: boolean;
  is_enabled: boolean;
  is_selected: boolean;
}

/** What a UI action came to on the device: the operation and where, which element, what text or key. */
export interface ResolvedUiAction {
  op: "tap" | "double_tap" | "long_press" | "type" | "key" | "swipe" | "open_app" | "wait" | "status" | "answer";
  x?: number;
  y?: number;
  toX?: number;
  toY?: number;
  /** Index into the element list the action was chosen on. */
  element?: number;
  /** Text typed, or the answer. */
  text?: string;
  /** KEYCODE_… sent. */
  key?: string;
  /** Package opened. */
  app?: string;
  goalStatus?: GoalStatus;
  durationMs?: number;
}

/** The previous step's answer as given (JSON text), the UI action read from it, what it resolved to, or why it was invalid. */
export interface StepOutcome {
  given: string;
  /** The AndroidWorld JSON action read from the answer (compact JSON), when it held a valid one. */
  action?: string;
  resolved?: ResolvedUiAction;
  invalid?: string;
}

/** What a policy's answer cost, when it knows (a model: tokens; any remote policy: latency, attempts). */
export interface PolicyUsage {
  promptTokens?: number;
  completionTokens?: number;
  latencyMs?: number;
  attempts?: number;
}

/**
 * A reply with more than the action: the answer as the policy received it (e.g. a model's text), what it cost,
 * or why it gave no valid action (recorded as an invalid step; the episode goes on).
 */
export interface PolicyDecision {
  action?: Action | UiAction;
  given?: string;
  invalid?: string;
  usage?: PolicyUsage;
  /** The policy version that chose this answer (a learner's weights: a response header, the model name answered with). */
  version?: string;
  /** A per-step instruction that goes with the answer (AndroidControl's; an operator may type one). */
  instruction?: string;
}

/** What `act` may return: an AndroidEnv action, a UI action, or a decision wrapping either. */
export type PolicyAnswer = Action | UiAction | PolicyDecision;

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
  /** The episode's goal text ("" when the task has no description and the campaign gave none). */
  goal?: string;
}

/** A policy chooses actions. Implementations: random, scripted, module, remote (HTTP), llm. `A`: what its `act` answers. */
export interface Policy<A extends PolicyAnswer = PolicyAnswer> {
  readonly name: string;
  readonly version: string;
  /** Whether `act` needs `observation.pixels`. */
  readonly needsPixels: boolean;
  /** Whether `act` needs `observation.elements` (the screen's accessibility tree is then read every step). */
  readonly needsElements?: boolean;
  /**
   * The longest one `act()` may take by the policy's own settings (the `llm` policy: its request timeout × tries +
   * backoff). A step's policy deadline defaults to it when neither the campaign nor the worker sets one.
   */
  readonly actDeadlineMs?: number;
  /** Called at every episode start. */
  reset(ctx: EpisodeContext): Promise<void>;
  act(observation: Observation, signal?: AbortSignal): Promise<A>;
  /** Optional: told once when the episode that began at the last reset ended (after its last step). */
  endEpisode?(end: EpisodeEndInfo): Promise<void>;
  close(): Promise<void>;
}
