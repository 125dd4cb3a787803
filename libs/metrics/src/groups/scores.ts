/** Episodes scored by the device's state (issue 41): final scores by task and result, and how long scoring took. */
import { Counter, Histogram } from "prom-client";
import { closedLabel } from "../bounded-label.ts";
import type { MetricContext } from "../metric-context.ts";
import { METRIC } from "../names.ts";

/** success: the final score's success is 1; failure: below 1; error: the score could not be computed. */
export type ScoreResult = "success" | "failure" | "error";
export const SCORE_RESULTS: readonly ScoreResult[] = ["success", "failure", "error"];

/** Scoring time: a setting read takes milliseconds, a pulled database or a task server seconds. */
/** A task server's device calls are AndroidEnv AdbRequest kinds (the 17 commands, `unknown` beside them). */
export const TASK_SERVER_COMMANDS = [
  "install_apk", "start_activity", "force_stop", "tap", "press_button", "start_screen_pinning", "uninstall_package", "get_current_activity", "push", "pull",
  "input_text", "settings", "generic", "package_manager", "get_orientation", "send_broadcast", "dumpsys", "unknown",
] as const;
export const TASK_SERVER_CALL_STATUSES = ["ok", "adb_error", "timeout", "failed_precondition", "internal_error", "unknown_command"] as const;

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
  const calls = new Counter({
    name: METRIC.taskServerCalls,
    help: "Device calls of outside task code (a task server's AdbRequests) carried out on episodes' devices, by command and status",
    labelNames: ["command", "status"] as const,
    registers,
  });
  const refusals = new Counter({
    name: METRIC.taskServerRefusals,
    help: "Device calls of outside task code the farm refused (host paths, other devices), by command",
    labelNames: ["command"] as const,
    registers,
  });
  const command = closedLabel(METRIC.taskServerCalls, "command", TASK_SERVER_COMMANDS, report);
  const refusedCommand = closedLabel(METRIC.taskServerRefusals, "command", TASK_SERVER_COMMANDS, report);
  const status = closedLabel(METRIC.taskServerCalls, "status", TASK_SERVER_CALL_STATUSES, report);
  return {
    /** One device call a task server made, carried out on the episode's device. */
    taskServerCall(cmd: string, st: string): void {
      calls.inc({ command: command(cmd), status: status(st) });
    },
    /** One device call a task server made that the farm refused. */
    taskServerRefusal(cmd: string): void {
      refusals.inc({ command: refusedCommand(cmd) });
    },
    /** One committed episode's final score. */
    episodeScored(taskId: string, r: ScoreResult, seconds?: number): void {
      scores.inc({ task: task(METRIC.episodeScores, taskId), result: result(r) });
      if (seconds !== undefined && valid(METRIC.episodeScoreDuration, seconds)) duration.observe(seconds);
    },
  };
}
