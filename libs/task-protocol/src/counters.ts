/**
 * Counters of the task protocol's events for a metrics registry to read (the worker turns them into
 * `farm_task_server_*` metrics): every key is a bounded label set (phase × command × status / outcome).
 *
 *   const counters = createTaskProtocolCounters();
 *   createRemoteTaskInstance(ref, key, { onEvent: counters.onEvent });
 *   counters.snapshot().calls["initialize generic ok"]   // → 2
 */
import type { TaskProtocolEvent } from "./instance.ts";

export interface TaskProtocolCounts {
  /** `"<phase> <command> <status>"` → device calls carried out. */
  calls: Record<string, number>;
  /** `"<phase> <command>"` → device calls refused. */
  refusals: Record<string, number>;
  /** `"<phase> <outcome>"` → phases ended (`ok` or an error code). */
  phases: Record<string, number>;
  /** Phases that ended in an error. */
  errors: number;
}

export interface TaskProtocolCounters {
  onEvent(e: TaskProtocolEvent): void;
  /** A copy of the counts so far. */
  snapshot(): TaskProtocolCounts;
}

export function createTaskProtocolCounters(): TaskProtocolCounters {
  const c: TaskProtocolCounts = { calls: Object.create(null), refusals: Object.create(null), phases: Object.create(null), errors: 0 };
  const inc = (rec: Record<string, number>, k: string) => (rec[k] = (rec[k] ?? 0) + 1);
  return {
    onEvent(e) {
      if (e.kind === "device_call") inc(c.calls, `${e.phase} ${e.command} ${e.status}`);
      else if (e.kind === "refused") inc(c.refusals, `${e.phase} ${e.command}`);
      else {
        inc(c.phases, `${e.phase} ${e.outcome}`);
        if (e.outcome !== "ok") c.errors++;
      }
    },
    snapshot: () => ({ calls: { ...c.calls }, refusals: { ...c.refusals }, phases: { ...c.phases }, errors: c.errors }),
  };
}
