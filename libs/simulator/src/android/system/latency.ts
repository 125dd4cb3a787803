/**
 * Added latency per command class, to make the simulated device as slow as a real one.
 *
 * "emulator-adb" is about one fifth of the published figures (adb-device-protocol.md §11), so load
 * tests keep the shape (actions and frames are costly, toybox commands are cheap) while 64 devices
 * still finish episodes in reasonable time:
 *   input     60 ms  (published: 300–400 ms per `input tap` through a client library, ≈1 s via the CLI)
 *   screencap 100 ms (published: p50 519 ms for adb screencap; 0.5–2 s for `screencap -p`)
 *   am, pm    60 ms  (Java command-line tools like `input`: a new ART process per call)
 *   settings, dumpsys 40 ms (binder calls from a small native/Java front end)
 *   shell     1 ms   (echo, getprop, ls, …: toybox, a few ms on a device)
 *   uiautomator 200 ms (published: 1–3 s per `uiautomator dump`: a new ART process, then at least 1 s
 *             of quiet screen; the command waits the same 200 ms again for its scaled quiet second)
 * "emulator-grpc" models input and screenshots over the emulator's gRPC endpoint (≈6 ms per touch
 * with a persistent injector, p50 20 ms per screenshot); everything else still goes over adb and
 * costs what it costs in "emulator-adb".
 * "instant" adds nothing (the default).
 */
/** What a shell command costs on a device, by kind (commands/types.ts re-exports it for the command table). */
export type LatencyClass = "input" | "screencap" | "am" | "pm" | "settings" | "dumpsys" | "shell" | "uiautomator";

export type LatencyProfileName = "instant" | "emulator-adb" | "emulator-grpc";

const EMULATOR_ADB: Record<LatencyClass, number> = {
  input: 60,
  screencap: 100,
  am: 60,
  pm: 60,
  settings: 40,
  dumpsys: 40,
  shell: 1,
  uiautomator: 200,
};

export const LATENCY_PROFILES: Record<LatencyProfileName, Record<LatencyClass, number>> = {
  instant: { input: 0, screencap: 0, am: 0, pm: 0, settings: 0, dumpsys: 0, shell: 0, uiautomator: 0 },
  "emulator-adb": EMULATOR_ADB,
  "emulator-grpc": { ...EMULATOR_ADB, input: 6, screencap: 20 },
};

/**
 * How long loading a snapshot takes. Real emulators load one in about 0.6–0.7 s; both emulator
 * profiles use that figure unscaled (a load is rare: once per episode at most).
 */
export const SNAPSHOT_LOAD_MS: Record<LatencyProfileName, number> = {
  instant: 0,
  "emulator-adb": 650,
  "emulator-grpc": 650,
};

export function isLatencyProfileName(name: string): name is LatencyProfileName {
  return Object.hasOwn(LATENCY_PROFILES, name);
}

/** Known aliases for the command classes (e.g. the transport's `framebuffer:` service). */
export function latencyClassOf(name: string): LatencyClass {
  switch (name) {
    case "input":
    case "touch":
      return "input";
    case "screencap":
    case "framebuffer":
    case "screenshot":
      return "screencap";
    case "am":
    case "wm":
      return "am";
    case "pm":
    case "cmd":
    case "install":
      return "pm";
    case "settings":
      return "settings";
    case "dumpsys":
      return "dumpsys";
    case "uiautomator":
      return "uiautomator";
    default:
      return "shell";
  }
}

/**
 * How long screen changes take on the device (ms at animation scale 1), by profile: what the apps of the
 * widget toolkit animate (apps/ui/motion.ts). Android's framework durations: config_shortAnimTime 200,
 * config_mediumAnimTime 400, config_longAnimTime 500; an activity transition ≈ 300 ms, a dialog's window
 * animation and the input method sliding in ≈ 250 ms; a fling keeps scrolling ≈ 500 ms after the finger
 * lifts (OverScroller, decelerating); a list whose contents load from storage or the network shows a
 * spinner ≥ 1 s (apps opt in). "instant" = 0 for all: screens change at once, as before.
 */
export interface MotionTimings {
  /** A new screen (page) slides in. Scaled by `transition_animation_scale`. */
  activityMs: number;
  /** A dialog rises (and falls when dismissed). Scaled by `window_animation_scale`. */
  dialogMs: number;
  /** The on-screen keyboard slides up (and down). Scaled by `window_animation_scale`. */
  keyboardMs: number;
  /** A fling keeps moving after the finger lifts. Physics (OverScroller), not an animation: not scaled. */
  flingMs: number;
  /** A slow list's contents appear after this (a spinner until then). Work of the app: not scaled. */
  listLoadMs: number;
  /** Whether a spinner's drawing moves (`animator_duration_scale` 0 stops every ValueAnimator). */
  spinnerAnimates: boolean;
}

const EMULATOR_MOTION: MotionTimings = { activityMs: 300, dialogMs: 250, keyboardMs: 250, flingMs: 500, listLoadMs: 1200, spinnerAnimates: true };

export const MOTION_PROFILES: Record<LatencyProfileName, MotionTimings> = {
  instant: { activityMs: 0, dialogMs: 0, keyboardMs: 0, flingMs: 0, listLoadMs: 0, spinnerAnimates: false },
  "emulator-adb": EMULATOR_MOTION,
  "emulator-grpc": EMULATOR_MOTION,
};

/**
 * An animation scale as the window manager reads it from the global settings (fixScale): a number
 * clamped to [0, 20], 1 when absent or not a number.
 */
export function animationScale(value: string | undefined): number {
  const v = value === undefined ? NaN : Number.parseFloat(value);
  if (!Number.isFinite(v)) return 1;
  return Math.min(20, Math.max(0, v));
}

/** The profile's timings under the global animation scales (`get` reads `settings get global KEY`). */
export function scaledMotion(profile: LatencyProfileName, get: (key: string) => string | undefined): MotionTimings {
  const base = MOTION_PROFILES[profile];
  const transition = animationScale(get("transition_animation_scale"));
  const window = animationScale(get("window_animation_scale"));
  const animator = animationScale(get("animator_duration_scale"));
  return {
    activityMs: Math.round(base.activityMs * transition),
    dialogMs: Math.round(base.dialogMs * window),
    keyboardMs: Math.round(base.keyboardMs * window),
    flingMs: base.flingMs,
    listLoadMs: base.listLoadMs,
    spinnerAnimates: base.spinnerAnimates && animator > 0,
  };
}
