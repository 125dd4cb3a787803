/**
 * Bounds on what a task file may say (documented in libs/task/README.md). Real files sit far below each of them
 * (the 292-file corpus: ≤ 12 KB, nesting 6, strings ≤ 294 characters, timeouts ≤ 60 s, episodes ≤ 10 800 s and
 * 1000 steps, retries ≤ 10, extras shapes ≤ 52 per dimension); they exist so hostile files fail early and clearly.
 */
export const TASK_LIMITS = Object.freeze({
  /** Bytes in one task file (an inline APK blob beyond this belongs in a file: install_apk { filesystem }). */
  maxFileBytes: 1 << 20,
  /** Nesting of `{ }`, `< >` and `[ ]`. */
  maxNestingDepth: 32,
  /** Characters in one text field (bytes fields such as blob contents are bounded by the file size only). */
  maxStringChars: 16_384,
  /** Task ids: letters, digits, `_ . -`, starting with a letter or digit (the queue's task id rule). */
  maxIdChars: 128,
  /** Any duration in seconds (timeouts, sleeps, max_episode_sec): one day, far below setTimeout's 24.8 days. */
  maxDurationSec: 86_400,
  /** Steps of one episode. */
  maxEpisodeSteps: 10_000_000,
  /** num_retries of a success condition. */
  maxRetries: 100,
  /** Tap coordinates in pixels. */
  maxCoordinate: 100_000,
  /** |reward| of a reward_event (and of any reward or score read from a log line). */
  maxAbsReward: 1e15,
  /** Dimensions of an extras_spec shape. */
  maxShapeRank: 8,
  /** Elements of one extra (the product of its shape): an extra must fit in one log line. */
  maxShapeElements: 65_536,
});

export const TASK_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/** Characters no text field may hold: NUL, and bidirectional overrides/isolates (they make text read differently). */
export const ALWAYS_FORBIDDEN = /[\u0000\u202a-\u202e\u2066-\u2069]/;
/** Control characters (C0 but tab and newline, DEL, C1): refused in every text field but descriptions and regexes. */
export const CONTROL = /[\u0001-\u0008\u000b-\u001f\u007f-\u009f]/;


/** Bounds of a task family file (FAMILIES.md; checked by family.ts, and by whatever takes parameters from outside). */
export const FAMILY_LIMITS = Object.freeze({
  /** Bytes in one `.family.yaml`. */
  maxFileBytes: 256 * 1024,
  /** Nesting of maps and lists. */
  maxNestingDepth: 16,
  /** Parameters of one family (and of one campaign line's fixed `params`). */
  maxParams: 64,
  /** Items of a `choice` list, and entries of a `map`. */
  maxChoices: 1000,
  /** `setup` steps. */
  maxSetupSteps: 64,
  /** `checks.items`. */
  maxChecks: 64,
  /** Characters of the goal template (the queue's goal bound). */
  maxGoalChars: 2000,
  /** Characters of any other template or text (shell commands, file contents, SQL). */
  maxTemplateChars: 16_384,
  /** Characters of one parameter value: written in the file, drawn, fixed by a campaign, rendered by `format`. */
  maxParamValueChars: 2000,
  /** `words`: words per value. */
  maxWords: 16,
  /** `text`: characters per value (and of its alphabet). */
  maxTextLength: 256,
  /** `number`: decimals. */
  maxDecimals: 10,
  /** `int` / `number` bounds: |min|, |max| (integers stay exact). */
  maxAbsNumber: 1e15,
});

/** A parameter name (FAMILIES.md "Parameters"); parameters live in null-prototype objects, so any such name is just a name. */
export const PARAM_NAME_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;
