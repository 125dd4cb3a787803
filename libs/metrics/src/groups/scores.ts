/** Episodes scored by the device's state (issue 41): final scores by task and result, and how long scoring took. */
import { Counter, Histogram } from "prom-client";
import { closedLabel } from "../bounded-label.ts";
import type { MetricContext } from "../metric-context.ts";
import { METRIC } from "../names.ts";

/** success: the final score's success is 1; failure: below 1; error: the score could not be computed. */
export type ScoreResult = "success" | "failure" | "error";
export const SCORE_RESULTS: readonly ScoreResult[] = ["success", "failure", "error"];

/** Scoring time: a setting read takes milliseconds, a pulled database or a task server seconds. */
export const SCORE_DURATION_BUCKETS_SEC = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export function createScoreMetrics({ registers, report, valid, labels: { task } }: MetricContext) {
  const scores = new Counter({
    name: METRIC.episodeScores,
    help: "Committed episodes with a task instance's final score, by task and result (success = success 1, failure = below 1, error = the score could not be computed)",
    labelNames: ["task", "result"] as const,
    registers,
  });
  const result = closedLabel(METRIC.episodeScores, "result", SCORE_RESULTS, report);
  const duration = new Histogram({
    name: METRIC.episodeScoreDuration,
    help: "Time the final score of an episode took (the task instance's checks on the device)",
    buckets: SCORE_DURATION_BUCKETS_SEC,
    registers,
  });
  return {
    /** One committed episode's final score. */
    episodeScored(taskId: string, r: ScoreResult, seconds?: number): void {
      scores.inc({ task: task(METRIC.episodeScores, taskId), result: result(r) });
      if (seconds !== undefined && valid(METRIC.episodeScoreDuration, seconds)) duration.observe(seconds);
    },
  };
}
