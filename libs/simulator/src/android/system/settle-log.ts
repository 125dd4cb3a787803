/**
 * Ground truth of "settled", for benchmarks only (issue 36): for each input delivered to the device
 * (a touch, a key, typed text), when its effect on the screen was complete — the end of every
 * transition it started (a screen sliding in, a dialog, the keyboard, a fling, a list loading). Times
 * are the device clock (the one `now()` of the simulated system uses). Nothing on a real device can
 * read this: a settle policy must never use it, only a benchmark that judges one.
 */

export interface SettleRecord {
  /** When the input was delivered (device clock, ms). */
  inputAt: number;
  /** When the screen had finished changing because of it; `Infinity` while something it started never ends. */
  settledAt: number;
}

/** Records kept (the oldest are dropped). */
export const SETTLE_HISTORY = 512;

export class SettleLog {
  private records: SettleRecord[] = [];

  constructor(private readonly now: () => number) {}

  /** An input was delivered now: its effect is complete at once unless a transition says otherwise. */
  input(): void {
    const t = this.now();
    this.records.push({ inputAt: t, settledAt: t });
    if (this.records.length > SETTLE_HISTORY) this.records.splice(0, this.records.length - SETTLE_HISTORY);
  }

  /** A transition started by the latest input ends at `atMs` (Infinity: never). */
  busyUntil(atMs: number): void {
    const last = this.records.at(-1);
    if (last && atMs > last.settledAt) last.settledAt = atMs;
  }

  /**
   * When the screen settled for every input delivered up to `atMs` (the latest end among them);
   * undefined when no input was delivered by then.
   */
  settledAt(atMs: number): number | undefined {
    let out: number | undefined;
    for (const r of this.records) if (r.inputAt <= atMs) out = Math.max(out ?? -Infinity, r.settledAt);
    return out;
  }

  /** The kept records, oldest first (copies). */
  history(): SettleRecord[] {
    return this.records.map((r) => ({ ...r }));
  }

  /** A snapshot load: the restored device has no input in flight. */
  clear(): void {
    this.records = [];
  }
}
