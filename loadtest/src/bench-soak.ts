/**
 * `farm bench soak [--episodes 10000] [--devices 4] [--max-steps 2] [--window 16]`: a long run of short
 * episodes on one host (worker + scheduler in this process, simulated emulators in a child), sampling
 * this process's open file descriptors and RSS, Redis memory, and the open TCP connections to the adb
 * server after warm-up (5 % of the episodes) and every 10 % after, to show they stay flat.
 * Redis memory includes the finished jobs BullMQ keeps (removeOnComplete: a day, at most 50 000) and
 * one claim per episode; both are reported beside it.
 * Last line: `episodes=<n> fd_start=… fd_end=… rss_mb_start=… rss_mb_end=… redis_mb_start=… redis_mb_end=… adb_conns_start=… adb_conns_end=…`.
 */
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startLocalFarm } from "@farm/local-farm";
import { createLogger } from "@farm/log";
import { commitKeys, createRedisClient } from "@farm/queue";
import { loadTaskFile } from "@farm/task";
import { intOpt } from "./options.ts";
import type { BenchOptions, Scenario } from "./scenario.ts";
import { simChildDevices } from "./sim-child.ts";
import { sleep } from "@farm/time";
import { benchLogLevel } from "./settings.ts";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** Open file descriptors of this process. */
function openFds(): number {
  return readdirSync("/proc/self/fd").length;
}

/** This process's TCP connections to 127.0.0.1:`port` (socket inodes of /proc/self/fd matched in /proc/net/tcp{,6}). */
function connectionsTo(port: number): number {
  const inodes = new Set<string>();
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  let n = 0;
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = "";
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && f[2]!.endsWith(`:${hexPort}`) && f[3] === "01" && inodes.has(f[9]!)) n++;
    }
  }
  return n;
}

interface Sample {
  episodes: number;
  fds: number;
  rssMb: number;
  redisMb: number;
  adbConns: number;
  retainedJobs: number;
  claims: number;
}

export const scenario: Scenario = {
  async run(opts: BenchOptions): Promise<void> {
    const episodes = intOpt(opts, "episodes", 10_000);
    const devices = intOpt(opts, "devices", 4);
    const maxSteps = intOpt(opts, "max-steps", 2);
    const window = intOpt(opts, "window", devices * 4);
    const out = (line: string) => process.stdout.write(`${line}\n`);
    const logger = createLogger({ service: "bench-soak", level: benchLogLevel() });
    const tmp = mkdtempSync(path.join(os.tmpdir(), "farm-soak-"));
    const prefix = "{soak}";
    const taskFile = path.join(REPO, "tasks/classic_2048.textproto");
    const task = loadTaskFile(taskFile);
    const farm = await startLocalFarm({
      devices: simChildDevices(devices, "instant"),
      taskPaths: [taskFile],
      outDir: path.join(tmp, "out"),
      queuePrefix: prefix,
      logger,
      worker: { episode: { settleMs: 0 } },
      scheduler: { windowSize: window },
    }).catch((e: unknown) => {
      rmSync(tmp, { recursive: true, force: true });
      throw e;
    });
    try {
      const { scheduler, adbPort } = farm;
      const probe = createRedisClient(farm.redisUrl);
      farm.releasers.add("redis probe", () => probe.quit());

      const campaignId = "soak";
      const sample = async (done: number): Promise<Sample> => {
        const info = await probe.info("memory");
        const used = Number(/used_memory:(\d+)/.exec(info)?.[1] ?? NaN);
        const counts = await scheduler.queue.getJobCounts("completed");
        return {
          episodes: done,
          fds: openFds(),
          rssMb: process.memoryUsage().rss / 2 ** 20,
          redisMb: used / 2 ** 20,
          adbConns: connectionsTo(adbPort),
          retainedJobs: counts.completed ?? 0,
          claims: await probe.hlen(commitKeys(prefix, campaignId).claims),
        };
      };
      const t0 = performance.now();
      await scheduler.submit({ id: campaignId, taskId: task.task.id, policy: "random", episodes, options: { maxEpisodeSteps: maxSteps } });
      const samples: Sample[] = [];
      const marks = [Math.ceil(episodes * 0.05), ...Array.from({ length: 10 }, (_, i) => Math.ceil((episodes * (i + 1)) / 10))];
      out(`soak: ${episodes} episodes of ${task.task.id} (max ${maxSteps} steps) on ${devices} simulated emulators, window ${window}`);
      out("");
      out("| episodes | open FDs | RSS MB | Redis used MB | adb connections | retained finished jobs | claims | elapsed s |");
      out("|---|---|---|---|---|---|---|---|");
      let st = await scheduler.status(campaignId);
      for (const mark of marks) {
        while (st.finished < mark && st.state === "running") {
          await sleep(250);
          st = await scheduler.status(campaignId);
        }
        global.gc?.();
        const s = await sample(st.finished);
        samples.push(s);
        out(`| ${s.episodes} | ${s.fds} | ${s.rssMb.toFixed(1)} | ${s.redisMb.toFixed(1)} | ${s.adbConns} | ${s.retainedJobs} | ${s.claims} | ${((performance.now() - t0) / 1000).toFixed(0)} |`);
      }
      const first = samples[0]!;
      const last = samples[samples.length - 1]!;
      const perEpisodeKb = ((last.redisMb - first.redisMb) * 1024) / Math.max(1, last.episodes - first.episodes);
      out("");
      out(`campaign ${st.state}: completed ${st.completed}, failed ${st.failed}; ${(st.finished / ((performance.now() - t0) / 1000)).toFixed(1)} episodes/s`);
      out(`Redis grows ${perEpisodeKb.toFixed(2)} KB per episode after warm-up: the finished jobs BullMQ keeps (removeOnComplete, ≤ 50 000) and one claim per episode (expire 30 days after the campaign ends)`);
      out("");
      out(`episodes=${st.finished} fd_start=${first.fds} fd_end=${last.fds} rss_mb_start=${first.rssMb.toFixed(1)} rss_mb_end=${last.rssMb.toFixed(1)} redis_mb_start=${first.redisMb.toFixed(1)} redis_mb_end=${last.redisMb.toFixed(1)} adb_conns_start=${first.adbConns} adb_conns_end=${last.adbConns}`);
    } finally {
      await farm.close().finally(() => rmSync(tmp, { recursive: true, force: true }));
    }
  },
};
