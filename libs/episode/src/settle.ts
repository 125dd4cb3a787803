/**
 * Settling after an action (issue 36): the step waits, as its settle policy (settle-spec.ts) says, for the screen
 * to be still before it takes its observation. The policies read the device only through `SettleSignals`, one
 * small interface with one implementation per source (settle-sources.ts): the element tree (uiautomator dump or
 * the accessibility forwarder, whatever the driver reads trees with), frames (the emulator's gRPC screenshot or
 * screencap, hashed) and accessibility events (`uiautomator events` over adb shell). Nothing here knows whether the
 * device is an emulator, a phone or the simulator.
 */
import { sleep } from "@farm/time";
import type { SettleSpec } from "./settle-spec.ts";

/** When the device's accessibility events last came (`performance.now()` clock), from a stream opened for the episode. */
export interface A11yEventClock {
  /** The arrival time of the latest event; undefined before the first. */
  readonly lastEventAt: number | undefined;
  /** Events seen since the stream opened. */
  readonly count: number;
  /** Set when the stream failed (the events policy then goes on with frames alone). */
  readonly failed: string | undefined;
}

export interface SettleSignals {
  /** The screen's element tree now, as a comparable key; undefined when it could not be read. */
  treeKey(): Promise<string | undefined>;
  /** The screen's pixels now, as a comparable key (a hash); undefined when they could not be taken. */
  frameKey(): Promise<string | undefined>;
  /** The episode's accessibility events, when the device offers a stream of them. */
  events(): A11yEventClock | undefined;
}

export interface SettleResult {
  /** Time spent settling (ms). */
  ms: number;
  /** The policy gave up at its cap (or the step's budget) before the screen was still. */
  capped: boolean;
  /** The events policy ran without an event source (frames only). */
  noEvents?: boolean;
}

/** Between frame samples of the quiet policies (≈ 30 frames per second at most). */
export const FRAME_SAMPLE_MS = 30;

/**
 * Waits as `spec` says, at most `budgetMs` (the step's time left); aborting `signal` ends the wait at once
 * (counted as capped). Never throws on device trouble: a failed read counts as a change.
 */
export async function settleScreen(spec: SettleSpec, signals: SettleSignals, budgetMs: number, signal?: AbortSignal): Promise<SettleResult> {
  const t0 = performance.now();
  const done = (capped: boolean, extra: Partial<SettleResult> = {}): SettleResult => ({ ms: performance.now() - t0, capped, ...extra });
  try {
    switch (spec.kind) {
      case "none":
        return done(false);
      case "fixed": {
        const ms = Math.min(spec.ms, budgetMs);
        if (ms > 0) await sleep(ms, signal);
        return done(ms < spec.ms);
      }
      case "androidworld":
        return done(!(await androidWorld(spec, signals, Math.min(spec.waitMs + spec.capMs, budgetMs), t0, signal)));
      case "events":
      case "frames": {
        const clock = spec.kind === "events" ? signals.events() : undefined;
        const usable = clock && clock.failed === undefined ? clock : undefined;
        const still = await quiet(spec.quietMs, Math.min(spec.capMs, budgetMs), signals, usable, t0, signal);
        return done(!still, spec.kind === "events" && !usable ? { noEvents: true } : {});
      }
    }
  } catch (e) {
    if (signal?.aborted) return done(true);
    throw e;
  }
}

/**
 * AndroidWorld: sleep `waitMs` (M3A's wait after an action), then read the elements until `reads` consecutive reads
 * at least `gapMs` apart are equal (env/interface.py `_get_stable_state`), within `capMs` of the first read.
 * True when the reads agreed, false at the cap.
 */
async function androidWorld(spec: Extract<SettleSpec, { kind: "androidworld" }>, signals: SettleSignals, limitMs: number, t0: number, signal?: AbortSignal): Promise<boolean> {
  const wait = Math.min(spec.waitMs, limitMs);
  if (wait > 0) await sleep(wait, signal);
  const deadline = Math.min(performance.now() + spec.capMs, t0 + limitMs);
  let tRead = performance.now();
  let prev = await signals.treeKey();
  let equal = 1;
  while (equal < spec.reads) {
    const next = tRead + spec.gapMs;
    if (next > deadline) return false;
    const now = performance.now();
    if (next > now) await sleep(next - now, signal);
    tRead = performance.now();
    const key = await signals.treeKey();
    equal = key !== undefined && key === prev ? equal + 1 : 1;
    prev = key;
  }
  return true;
}

/**
 * Still for `quietMs`: frames sampled every FRAME_SAMPLE_MS show no change (and, with `events`, no accessibility
 * event came) over a span of at least `quietMs` ending at the latest sample. False at `capMs`.
 */
async function quiet(quietMs: number, capMs: number, signals: SettleSignals, events: A11yEventClock | undefined, t0: number, signal?: AbortSignal): Promise<boolean> {
  const deadline = t0 + capMs;
  let sampleAt = performance.now();
  let key = await signals.frameKey();
  // The screen is known unchanged since `since` (the first sample that showed the current frame, or the latest event).
  let since = sampleAt;
  for (;;) {
    const ev = events?.lastEventAt;
    if (ev !== undefined && ev > since) since = ev;
    if (key !== undefined && sampleAt - since >= quietMs && (ev === undefined || sampleAt - ev >= quietMs)) return true;
    const now = performance.now();
    if (now >= deadline) return false;
    const next = Math.max(sampleAt + FRAME_SAMPLE_MS, now);
    if (next > now) await sleep(Math.min(next, deadline) - now, signal);
    if (performance.now() >= deadline && next > deadline) return false;
    sampleAt = performance.now();
    const k = await signals.frameKey();
    if (k === undefined || k !== key) since = sampleAt;
    key = k;
  }
}
