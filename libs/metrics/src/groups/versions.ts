/** Policy versions (issue 38): committed episodes too stale for a learner, and how many versions episodes spanned. */
import { Counter, Histogram } from "prom-client";
import { closedLabel } from "../bounded-label.ts";
import type { MetricContext } from "../metric-context.ts";
import { METRIC } from "../names.ts";

/** span: the episode's steps spanned more than the max staleness; lag: they lagged the campaign's current version by more. */
export const STALE_KINDS = ["span", "lag"] as const;
/** mark: the episode was kept with its reason; end: it was ended (cause stale_policy). */
export const STALE_ACTIONS = ["mark", "end"] as const;

/** Versions spanned by one episode's steps (whole-number versions; 0: one version). */
export const VERSION_SPAN_BUCKETS = [0, 1, 2, 3, 4, 8, 16, 32, 64];

export function createVersionMetrics({ registers, report, valid }: MetricContext) {
  const stale = new Counter({
    name: METRIC.episodesStale,
    help: "Committed episodes whose policy versions spanned, or lagged the campaign's current version by, more than the campaign's max staleness; by kind (span, lag) and what was done (mark, end)",
    labelNames: ["kind", "on_stale"] as const,
    registers,
  });
  const kind = closedLabel(METRIC.episodesStale, "kind", STALE_KINDS, report);
  const action = closedLabel(METRIC.episodesStale, "on_stale", STALE_ACTIONS, report);
  const span = new Histogram({
    name: METRIC.episodeVersionSpan,
    help: "Policy versions one committed episode's steps spanned (whole-number versions only; episodes whose policy reported versions)",
    buckets: VERSION_SPAN_BUCKETS,
    registers,
  });
  return {
    /** One committed stale episode. */
    episodeStale(k: string, onStale: string): void {
      stale.inc({ kind: kind(k), on_stale: action(onStale) });
    },
    /** The version span of one committed episode whose steps reported comparable versions. */
    episodeVersionSpan(versions: number): void {
      if (valid(METRIC.episodeVersionSpan, versions)) span.observe(versions);
    },
  };
}
