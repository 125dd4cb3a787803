/**
 * One validated runner config with defaults; durations carry their unit in the name. Compiled once with
 * `compileEpisodeConfig()`; every component reads the compiled object.
 */
import { DEFAULT_FRAME_SPEC, formatFrameSpec, parseFrameSpec, type FrameSpec } from "@farm/frames";

export interface EpisodeConfig {
  /** Wait after every setup/reset step before its check (upstream: 0.5 s). A deliberate knob so tests can shorten it. @default 500 */
  settleMs?: number;
  /** Deadline for one step's device work (action + observation + app-screen check); past it the episode ends as `device_hung`. @default 10000 */
  stepTimeoutMs?: number;
  /** Deadline for the whole reset (lift fingers, reset steps, orientation, first observation). @default 120000 */
  resetTimeoutMs?: number;
  /**
   * Deadline for one `policy.act()` / `policy.reset()`; past it the request is aborted and the episode ends as
   * `policy_failed`. 0: what the policy declares it needs (`actDeadlineMs`), else 30000. A campaign's
   * `policyTimeoutMs` overrides it. @default 0
   */
  policyTimeoutMs?: number;
  /** Deadline for one adb call made by the runner itself (screenshot, orientation, app-screen check). @default 10000 */
  adbCallTimeoutMs?: number;
  /** Run the expected-app-screen check every K steps (upstream: 150, reported 150 steps late). `<= 0` disables the step cadence. @default 150 */
  appScreenCheckEverySteps?: number;
  /** Also run it when this many ms passed since the last check. `<= 0` disables the time cadence. @default 0 */
  appScreenCheckEveryMs?: number;
  /** Consecutive FAILED_ACTIVITY_EXTRACTION results that count as "app left" (upstream: 10). @default 10 */
  maxFailedCurrentActivity?: number;
  /** Consecutive bad (app-left) episodes after which the device is relaunched (upstream flag never read). @default 3 */
  maxBadEpisodes?: number;
  /** Recovery attempts (reopen + setup) allowed between two good episodes; past it the device is unusable. @default 3 */
  maxRecoveries?: number;
  /** Wait between recovery attempts. @default 1000 */
  recoveryBackoffMs?: number;
  /** Deadline for the device to answer again during recovery. @default 30000 */
  recoveryWaitMs?: number;
  /** Wait after the action before reading the step's rewards (upstream: 0, no drain). @default 0 */
  logSettleMs?: number;
  /**
   * When an episode is truncated by the step or time limit (or cancelled), wait this long and add the reward and
   * extras lines logged for the last action to the last step (upstream discards them at the next reset). @default 100
   */
  finalLogDrainMs?: number;
  /** Extras kept per name between steps (upstream extras_max_buffer_size). @default 100 */
  extrasMaxPerName?: number;
  /** Record a PNG frame every N steps in the trajectory (0 = never; the FIRST observation counts as step 0). @default 0 */
  frameEvery?: number;
  /** How recorded frames are stored: a FrameSpec or its text (`png`, `jpeg:85`, `webp:80`, optional `@WxH`). @default png at the device's size */
  frameEncoding?: FrameSpec | string;
  /** Folders where APKs of install steps (filesystem or mpm) are looked up. @default [] */
  apkDirs?: string[];
}

export type CompiledEpisodeConfig = Readonly<Required<Omit<EpisodeConfig, "frameEncoding">> & { frameEncoding: FrameSpec }>;

export const episodeConfigDefaults: CompiledEpisodeConfig = Object.freeze({
  settleMs: 500,
  stepTimeoutMs: 10_000,
  resetTimeoutMs: 120_000,
  policyTimeoutMs: 0,
  adbCallTimeoutMs: 10_000,
  appScreenCheckEverySteps: 150,
  appScreenCheckEveryMs: 0,
  maxFailedCurrentActivity: 10,
  maxBadEpisodes: 3,
  maxRecoveries: 3,
  recoveryBackoffMs: 1000,
  recoveryWaitMs: 30_000,
  logSettleMs: 0,
  finalLogDrainMs: 100,
  extrasMaxPerName: 100,
  frameEvery: 0,
  frameEncoding: DEFAULT_FRAME_SPEC,
  apkDirs: [],
});

export function compileEpisodeConfig(opts: EpisodeConfig = {}): CompiledEpisodeConfig {
  const out: Record<string, unknown> = { ...episodeConfigDefaults };
  for (const [k, v] of Object.entries(opts)) {
    if (v === undefined) continue;
    if (!(k in episodeConfigDefaults)) throw new RangeError(`unknown episode config option '${k}'`);
    if (k === "apkDirs") {
      if (!Array.isArray(v) || v.some((d) => typeof d !== "string")) throw new RangeError("apkDirs must be a list of folders");
      out[k] = [...v];
      continue;
    }
    if (k === "frameEncoding") {
      const spec = typeof v === "string" ? parseFrameSpec(v) : v;
      if (typeof spec === "string") throw new RangeError(`episode config 'frameEncoding': ${spec}`);
      const checked = typeof spec === "object" && spec !== null ? parseFrameSpec(formatFrameSpec(spec as FrameSpec)) : "not a frame spec";
      if (typeof checked === "string") throw new RangeError(`episode config 'frameEncoding': ${checked}`);
      out[k] = checked;
      continue;
    }
    if (typeof v !== "number" || !Number.isFinite(v)) throw new RangeError(`episode config '${k}' must be a finite number, got ${String(v)}`);
    const allowNonPositive = k === "appScreenCheckEverySteps" || k === "appScreenCheckEveryMs" || k === "frameEvery";
    if (v < 0 && !allowNonPositive) throw new RangeError(`episode config '${k}' must be >= 0, got ${v}`);
    out[k] = v;
  }
  for (const k of ["stepTimeoutMs", "resetTimeoutMs", "adbCallTimeoutMs", "extrasMaxPerName", "maxFailedCurrentActivity"] as const) {
    if ((out[k] as number) <= 0) throw new RangeError(`episode config '${k}' must be > 0`);
  }
  return Object.freeze(out) as CompiledEpisodeConfig;
}
