/**
 * prom-client Histograms and Counters updated for one fixed label set without prom-client's per-call work (label
 * validation, label hashing, a closure and float-keyed bucket lookups per observation). Why: the
 * step-phase histogram is observed 3-4 times per step, and measured in `farm bench farm` that work was
 * ~20 µs per observation, a large part of the worker's CPU per step. It updates prom-client's own entry
 * for the label set, so exposition, `reset()` and the registry stay prom-client's; if that entry cannot
 * be found (another prom-client layout) it falls back to `observe` / `inc`.
 */
import type { Counter, Histogram } from "prom-client";

interface HistogramEntry {
  labels: Record<string, string | number>;
  bucketValues: Record<string, number>;
  sum: number;
  count: number;
}

interface CounterEntry {
  labels: Record<string, string | number>;
  value: number;
}

/**
 * prom-client's own entry for one label set of a metric, made with `create` when missing; found again after
 * `reset()` swaps the metric's map. Undefined when the metric keeps no such map (another prom-client layout).
 */
function labelEntry<E extends { labels: Record<string, string | number> }>(metric: object, labels: Record<string, string>, create: () => void): () => E | undefined {
  const internals = metric as { hashMap?: Record<string, E> };
  const names = Object.keys(labels);
  const matches = (e: E | undefined): e is E => !!e && names.every((n) => e.labels[n] === labels[n]);
  let hash: string | undefined;
  const find = (): E | undefined => {
    const map = internals.hashMap;
    if (!map) return undefined;
    if (hash !== undefined && matches(map[hash])) return map[hash];
    hash = Object.keys(map).find((k) => matches(map[k]));
    if (hash === undefined) {
      create();
      hash = Object.keys(map).find((k) => matches(map[k]));
    }
    return hash === undefined ? undefined : map[hash];
  };
  let entry = find();
  return () => {
    // reset() swaps the map: find the (new) entry again.
    if (!entry || internals.hashMap?.[hash!] !== entry) entry = find();
    return entry;
  };
}

export function boundHistogram<L extends string>(h: Histogram<L>, labels: Record<L, string>, buckets: readonly number[]): (seconds: number) => void {
  const keys = buckets.map(String);
  const entry = labelEntry<HistogramEntry>(h, labels, () => h.zero(labels as never));
  return (v: number): void => {
    const e = entry();
    if (!e) return h.observe(labels as never, v);
    e.sum += v;
    e.count += 1;
    for (let i = 0; i < keys.length; i++) {
      if (v <= buckets[i]!) {
        e.bucketValues[keys[i]!] = (e.bucketValues[keys[i]!] ?? 0) + 1;
        return;
      }
    }
  };
}

/** Bound observers of a one-label histogram, made per label value on first use (the hot paths: one per step phase, one per adb op). */
export function boundHistogramPerLabel<L extends string>(h: Histogram<L>, label: L, buckets: readonly number[]): (value: string) => (seconds: number) => void {
  const observers = new Map<string, (seconds: number) => void>();
  return (value) => {
    let observe = observers.get(value);
    if (!observe) observers.set(value, (observe = boundHistogram(h, { [label]: value } as Record<L, string>, buckets)));
    return observe;
  };
}

/**
 * A prom-client Counter incremented for one fixed label set without its per-call label validation and hashing
 * (the adb-calls counter is incremented on every action). Updates prom-client's own entry, as boundHistogram.
 */
export function boundCounter<L extends string>(c: Counter<L>, labels: Record<L, string>): (n?: number) => void {
  const entry = labelEntry<CounterEntry>(c, labels, () => c.inc(labels as never, 0));
  return (n = 1): void => {
    const e = entry();
    if (!e) return c.inc(labels as never, n);
    e.value += n;
  };
}

/** Bound counters per label set, made on first use (the caller keeps the label values bounded). */
export function boundCounterPerLabels<L extends string>(c: Counter<L>): (labels: Record<L, string>) => (n?: number) => void {
  const counters = new Map<string, (n?: number) => void>();
  return (labels) => {
    const key = Object.values<string>(labels).join("\u0000");
    let inc = counters.get(key);
    if (!inc) counters.set(key, (inc = boundCounter(c, labels)));
    return inc;
  };
}
