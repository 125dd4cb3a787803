/** Exactly-once commits, quarantined files, retries, Redis reachability, and which build runs where. */
import { Counter, Gauge } from "prom-client";
import { closedLabel } from "../bounded-label.ts";
import type { MetricContext } from "../metric-context.ts";
import { METRIC } from "../names.ts";
import { FARM_VERSION } from "../version.ts";
import { COMMIT_RESULTS, RETRY_CAUSES, type CommitResult } from "../vocabulary.ts";

export function createCommitMetrics({ registers, report, valid, opts }: MetricContext) {
  const commits = new Counter({
    name: METRIC.commits,
    help: "Episode commit attempts by result: committed, duplicate_prevented (another attempt had committed), completed_from_claim, lock_lost",
    labelNames: ["result"] as const,
    registers,
  });
  const commitResult = closedLabel(METRIC.commits, "result", COMMIT_RESULTS, report);
  const filesQuarantined = new Counter({
    name: METRIC.filesQuarantined,
    help: "Episode files moved out of readers' sight because the farm-wide claim names another file",
    registers,
  });
  const retries = new Counter({
    name: METRIC.episodeRetries,
    help: "Episode attempts that end in a retry, by cause",
    labelNames: ["cause"] as const,
    registers,
  });
  const retryCause = closedLabel(METRIC.episodeRetries, "cause", RETRY_CAUSES, report);
  // Which build is running where: join it onto any series (`* on(instance) group_left(version) farm_build_info`).
  const buildInfo = new Gauge<"version" | "node_version">({ name: METRIC.buildInfo, help: "Always 1; labels: the farm's version and the Node.js version of this process", labelNames: ["version", "node_version"], registers });
  buildInfo.set({ version: opts.version ?? FARM_VERSION, node_version: process.versions.node }, 1);
  const redisUp = new Gauge({ name: METRIC.redisUp, help: "1 while this process reaches Redis, 0 during an outage", registers });
  redisUp.set(1);
  const redisOutages = new Counter({ name: METRIC.redisOutages, help: "Redis outages seen by this process", registers });
  for (const r of COMMIT_RESULTS) commits.inc({ result: r }, 0);
  for (const c of RETRY_CAUSES) retries.inc({ cause: c }, 0);
  return {
    commit(result: CommitResult): void {
      commits.inc({ result: commitResult(result) });
    },
    fileQuarantined(n = 1): void {
      if (valid(METRIC.filesQuarantined, n)) filesQuarantined.inc(n);
    },
    /** `cause`: a retryable QueueErrorCode (any case) or "stalled"; unknown causes become "other". */
    episodeRetry(cause: string): void {
      retries.inc({ cause: retryCause(cause.toLowerCase()) });
    },
    /** Redis reachable (true) or not; each change to false counts one outage. */
    setRedisUp(up: boolean): void {
      if (!up) redisOutages.inc();
      redisUp.set(up ? 1 : 0);
    },
  };
}
