/**
 * Accumulates what the task's log lines mean between two steps: reward (score deltas, reward, reward_event),
 * extras (buffered per name, checked against extras_spec) and the episode-end flag. While paused (during a
 * reset) lines are discarded, as upstream, but message waiters (wait_for_message) still see them.
 */
import type { LogcatRecord } from "@farm/adb";
import { orTimeout } from "@farm/time";
import type { ArraySpec, LogParsing, PyRegex } from "@farm/task";
import { ExtrasBuffer, checkExtra } from "./extras.ts";
import { LOG_LIMITS } from "./log-bounds.ts";
import { excerpt, LogParser, pyMatch } from "./log-parser.ts";
import type { MessageWaiter } from "./step-interpreter.ts";
import type { StepExtra } from "./trajectory-types.ts";

export interface AccumulatorHooks {
  onMalformed(what: string, detail: string): void;
  onExtraDropped(name: string, reason: string, detail: string): void;
}

export interface StepTake {
  reward: number;
  extras: StepExtra[];
}

export class LogAccumulator {
  private readonly parser: LogParser;
  private readonly specs: Map<string, ArraySpec>;
  private readonly extras: ExtrasBuffer;
  private readonly waiters = new Set<(message: string) => void>();
  private reward = 0;
  private paused = true;
  /** An episode_end line was read since the last reset. */
  episodeEnd = false;
  /** The last `score:` value read since the last reset. */
  lastScore: number | undefined;
  /** Per-episode counters (zeroed at reset). */
  counters: Record<string, number> = {};

  constructor(
    cfg: LogParsing,
    extrasSpec: readonly ArraySpec[],
    extrasMaxPerName: number,
    private readonly hooks: AccumulatorHooks,
  ) {
    this.parser = new LogParser(cfg);
    this.specs = new Map(extrasSpec.map((s) => [s.name, s]));
    this.extras = new ExtrasBuffer(extrasMaxPerName, LOG_LIMITS.maxExtraNamesPerStep);
  }

  private bump(k: string, by = 1): void {
    this.counters[k] = (this.counters[k] ?? 0) + by;
  }

  pause(): void {
    this.paused = true;
  }

  /** Resume after a reset: zero reward, score, extras, the episode-end flag and the counters. */
  resumeFresh(): void {
    this.reward = 0;
    this.episodeEnd = false;
    this.lastScore = undefined;
    this.parser.reset();
    this.extras.clear();
    this.extras.overflowed = 0;
    this.counters = {};
    this.paused = false;
  }

  /** Feed one logcat record (the device session's logcat listener calls this). */
  onRecord(rec: Pick<LogcatRecord, "message">): void {
    if (rec.message.length > LOG_LIMITS.maxLineChars) {
      // Not even message waiters see it: every regex's cost is bounded by the line length.
      if (this.paused) return;
      this.bump("log_line_too_long");
      this.hooks.onMalformed("line", `line of ${rec.message.length} characters is longer than the ${LOG_LIMITS.maxLineChars} parsed: ${excerpt(rec.message, 80)}`);
      return;
    }
    const msg = this.parser.messageOf(rec);
    if (msg === undefined) return;
    for (const w of this.waiters) w(msg);
    if (this.paused) return;
    this.bump("log_lines");
    for (const ev of this.parser.parseMessage(msg)) {
      switch (ev.kind) {
        case "score":
          this.reward += ev.reward;
          this.lastScore = ev.score;
          break;
        case "reward":
          this.reward += ev.reward;
          break;
        case "episode_end":
          this.episodeEnd = true;
          break;
        case "extra": {
          const c = checkExtra(ev.name, ev.value, this.specs);
          if (c.ok) {
            if (!c.declared && this.specs.size > 0) this.bump("extras_undeclared");
            this.extras.add(c.extra);
          } else {
            this.bump("extras_dropped");
            this.hooks.onExtraDropped(ev.name, c.reason, c.detail);
          }
          break;
        }
        case "malformed":
          this.bump("log_malformed");
          this.bump(`log_malformed_${ev.what}`);
          this.hooks.onMalformed(ev.what, ev.detail);
          break;
      }
    }
  }

  /** Take-and-zero the reward, take-and-clear the extras (upstream §7.7.3). */
  take(): StepTake {
    const reward = this.reward;
    this.reward = 0;
    const extras = this.extras.take();
    if (this.extras.overflowed > 0) {
      this.bump("extras_overflowed", this.extras.overflowed);
      this.extras.overflowed = 0;
    }
    return { reward, extras };
  }

  /** Take-and-clear the extras only (the FIRST observation's extras; the reward stays for step 1). */
  takeExtras(): StepExtra[] {
    return this.extras.take();
  }

  /** A waiter that sees every message from now on (paused or not). */
  listenForMessage(message: PyRegex): MessageWaiter {
    let matched = false;
    let wake: (() => void) | undefined;
    const fn = (msg: string) => {
      if (!matched && pyMatch(message, msg)) {
        matched = true;
        wake?.();
      }
    };
    this.waiters.add(fn);
    return {
      wait: async (timeoutMs, signal) => {
        if (matched || signal?.aborted) return matched;
        let woken!: () => void;
        const wakeUp = new Promise<void>((resolve) => (woken = resolve));
        wake = woken;
        signal?.addEventListener("abort", woken, { once: true });
        await orTimeout(wakeUp, timeoutMs, () => undefined);
        signal?.removeEventListener("abort", woken);
        wake = undefined;
        return matched;
      },
      dispose: () => {
        this.waiters.delete(fn);
      },
    };
  }
}
