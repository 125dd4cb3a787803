/**
 * The chaos scenario behind `farm bench chaos` and its short version in loadtest/test/chaos.test.ts:
 * two simulated hosts (each its own adb server, simulated emulators, `farm worker` process and output
 * folder) and a `farm scheduler` process on one Redis with AOF persistence. During a campaign it
 * injects, in order of progress:
 *   - a worker that stops right after a commit, before acknowledging (fault hook crash-after-claim)
 *   - SIGKILL of a worker, which restarts with a crash between publish and claim (crash-after-publish)
 *   - a worker frozen (SIGSTOP) past its lock duration, then continued
 *   - a restart of one host's adb server
 *   - SIGKILL of Redis, restarted from its AOF
 *   - SIGKILL of the scheduler
 *   - SIGKILL of one host's simulator process
 * Killed processes are started again, as a supervisor would. Then the workers drain and the folders are
 * checked: distinct episodes, duplicates and missing across the union of the folders, files read by
 * avrocat and Python's avro, and `reconcileFolders` against the claims.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { startAdbServer, startRedis, type LocalAdbServer, type LocalRedis } from "@farm/local-services";
import { createRedisClient, RedisCommitArbiter } from "@farm/queue";
import { Scheduler } from "@farm/scheduler";
import { loadTaskFile } from "@farm/task";
import { inspectTrajectories, listTrajectoryFiles, readEpisodeFile } from "@farm/trajectory";
import { reconcileFolders, type ReconcileReport } from "@farm/worker";
import { FarmProcess } from "./farm-process.ts";
import { startSimChild, type SimChild } from "./sim-child.ts";
import { sleep } from "@farm/time";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const run = promisify(execFile);

export interface ChaosOptions {
  episodes: number;
  devicesPerHost: number;
  maxSteps: number;
  lockMs: number;
  stalledMs: number;
  window: number;
  /** Folder for outputs and logs (kept). */
  dir: string;
  timeoutMs: number;
  log?(line: string): void;
}

export interface ChaosResult {
  episodes: number;
  distinct: number;
  duplicates: number;
  missing: number;
  quarantined: number;
  faults: number;
  faultLog: string[];
  files: number;
  unreadableByAvrocat: string[];
  unreadableByPython: string[];
  reconcile: ReconcileReport;
  campaignState: string;
  summary: unknown;
  /** The campaign's live commit accounting after the workers settled. */
  commits: unknown;
  wallSec: number;
}


interface Host {
  name: string;
  adb: LocalAdbServer;
  sims: SimChild;
  worker: FarmProcess;
  out: string;
}

function countFiles(dir: string): number {
  if (!existsSync(dir)) return 0;
  let n = 0;
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    n += statSync(p).isDirectory() ? countFiles(p) : name.endsWith(".avro") || /\.avro\.[0-9a-f]+$/.test(name) ? 1 : 0;
  }
  return n;
}

export async function runChaos(o: ChaosOptions): Promise<ChaosResult> {
  const log = o.log ?? (() => undefined);
  const t0 = Date.now();
  mkdirSync(o.dir, { recursive: true });
  const taskFile = path.join(REPO, "tasks/classic_2048.textproto");
  const task = loadTaskFile(taskFile);
  const prefix = "{chaos}";
  const campaignId = "chaos";
  const faultLog: string[] = [];
  const fault = (what: string) => {
    faultLog.push(what);
    log(`fault ${faultLog.length}: ${what} (t=${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  };
  const cleanups: Array<() => Promise<unknown>> = [];
  const redis: LocalRedis = await startRedis({ appendOnly: true });
  cleanups.push(() => redis.close());
  let client: Scheduler | undefined;
  try {
    const workerArgs = (name: string, adbPort: number, out: string) => [
      "worker", "--redis", redis.url, "--prefix", prefix, "--adb-port", String(adbPort), "--tasks", taskFile, "--out", out,
      "--metrics-port", "0", "--name", name, "--lock-ms", String(o.lockMs), "--stalled-ms", String(o.stalledMs),
      "--drain-ms", "5000", "--settle-ms", "20", "--resolve-ms", "1000",
    ];
    // Which fault hook each start of a worker arms: B stops right after its 2nd commit; A, restarted
    // after its SIGKILL, dies between publishing and claiming its first episode.
    const hooks: Record<string, Record<number, string>> = { A: { 1: "crash-after-publish:1" }, B: { 0: "crash-after-claim:2" } };
    // Both hosts are set up side by side (each `farm sim` start is a few seconds of tsx on a busy machine).
    const hosts: Host[] = await Promise.all(
      ["A", "B"].map(async (name) => {
        const adb = await startAdbServer();
        cleanups.push(() => adb.close());
        const sims = await startSimChild(o.devicesPerHost, adb.port, "instant");
        const out = path.join(o.dir, `host${name}`);
        const worker = new FarmProcess({
          name: `worker${name}`,
          args: workerArgs(`host${name}`, adb.port, out),
          envFor: (n): Record<string, string> => {
            const hook = hooks[name]?.[n];
            return hook ? { FARM_FAULT_INJECT: hook } : {};
          },
          logFile: path.join(o.dir, `worker${name}.log`),
        });
        const host: Host = { name, adb, sims, worker, out };
        cleanups.push(() => host.sims.close());
        cleanups.push(() => worker.close());
        return host;
      }),
    );
    const scheduler = new FarmProcess({
      name: "scheduler",
      args: ["scheduler", "--redis", redis.url, "--prefix", prefix, "--port", "0", "--tasks", taskFile, "--window", String(o.window)],
      logFile: path.join(o.dir, "scheduler.log"),
    });
    cleanups.push(() => scheduler.close());
    scheduler.start();
    for (const h of hosts) h.worker.start();

    client = await Scheduler.create({ redisUrl: redis.url, prefix, taskPaths: [taskFile], enqueueOnSubmit: false });
    await client.submit({ id: campaignId, taskId: task.task.id, policy: "random", episodes: o.episodes, options: { maxEpisodeSteps: o.maxSteps } });
    log(`campaign ${campaignId}: ${o.episodes} episodes on 2 hosts × ${o.devicesPerHost} devices (lock ${o.lockMs} ms, window ${o.window})`);

    const [A, B] = hosts as [Host, Host];
    let progress = 0;
    let state = "running";
    let summary: unknown;
    let commits: unknown;
    const poll = async () => {
      try {
        const s = await client!.status(campaignId);
        if (s.finished !== progress) log(`progress ${s.finished}/${o.episodes} (t=${((Date.now() - t0) / 1000).toFixed(1)} s)`);
        progress = s.finished;
        state = s.state;
        summary = s.summary ?? s;
        commits = s.commits;
      } catch {
        // Redis down or restarting: try again
      }
    };
    const deadline = Date.now() + o.timeoutMs;
    const untilProgress = async (fraction: number) => {
      while (progress < Math.ceil(fraction * o.episodes) && state === "running") {
        if (Date.now() > deadline) throw new Error(`chaos: campaign stuck at ${progress}/${o.episodes}; logs in ${o.dir}`);
        await sleep(200);
        await poll();
      }
    };
    const steps: Array<[number, () => Promise<void>]> = [
      [0.1, async () => {
        fault("SIGKILL worker A");
        A.worker.signal("SIGKILL");
      }],
      [0.25, async () => {
        const freezeMs = 2 * o.lockMs + 2 * o.stalledMs + 1000;
        fault(`SIGSTOP worker B for ${freezeMs} ms (lock ${o.lockMs} ms)`);
        B.worker.signal("SIGSTOP");
        await sleep(freezeMs);
        B.worker.signal("SIGCONT");
      }],
      [0.4, async () => {
        fault("restart host A's adb server");
        await A.adb.restart();
      }],
      [0.5, async () => {
        fault("SIGKILL Redis, restart from AOF after 1 s");
        redis.kill();
        await sleep(1000);
        await redis.restart();
      }],
      [0.6, async () => {
        fault("SIGKILL scheduler");
        scheduler.signal("SIGKILL");
      }],
      [0.7, async () => {
        fault("SIGKILL host B's simulator process, start a new one");
        B.sims.child.kill("SIGKILL");
        await B.sims.close();
        await sleep(500);
        B.sims = await startSimChild(o.devicesPerHost, B.adb.port, "instant");
      }],
    ];
    // Each fault starts when the campaign reaches its share of episodes and runs on its own (a freeze
    // lasts seconds, during which the other host keeps committing), so a fast campaign cannot outrun them.
    const running: Promise<void>[] = [];
    for (const [at, step] of steps) {
      await untilProgress(at);
      if (state !== "running") break;
      running.push(step());
    }
    await Promise.all(running);
    await untilProgress(1.01);
    log(`campaign ${state} after ${((Date.now() - t0) / 1000).toFixed(1)} s; waiting for the workers to settle pending files`);
    for (const h of hosts) for (let i = 0; i < h.worker.hookFaults; i++) fault(`fault hook in worker ${h.name} (see its log)`);
    // The workers settle files of lost attempts against the claims by themselves (every --resolve-ms):
    // wait until the folders hold no file the claims do not name, then stop them. (An unclaimed file
    // stays: its episode was never committed, e.g. a job that failed for good; reconcile reports it.)
    const folders = hosts.map((h) => h.out);
    const arbiterClient = createRedisClient(redis.url);
    try {
      const arbiter = new RedisCommitArbiter(arbiterClient, prefix);
      const settleDeadline = Math.min(deadline, Date.now() + 60_000);
      for (;;) {
        const r = await reconcileFolders({ folders: folders.filter((d) => existsSync(d)), campaignId, arbiter });
        if (r.extra.length === 0 || Date.now() > settleDeadline) break;
        await sleep(500);
      }
    } finally {
      arbiterClient.disconnect();
    }
    log(`settled after ${((Date.now() - t0) / 1000).toFixed(1)} s; stopping`);
    await poll();
    await Promise.all([...hosts.map((h) => h.worker.close(5000)), scheduler.close(5000)]);

    // --- the checks ---------------------------------------------------------------------------
    const files = (await listTrajectoryFiles(folders.filter((d) => existsSync(d)))).files;
    const byIndex = new Map<number, number>();
    for (const f of files) {
      const rec = await readEpisodeFile(f);
      if (rec?.campaignId === campaignId) byIndex.set(rec.episodeIndex, (byIndex.get(rec.episodeIndex) ?? 0) + 1);
    }
    const distinct = [...byIndex.keys()].filter((i) => i >= 0 && i < o.episodes).length;
    // `farm trajectories inspect` over both folders must agree: it counts duplicate episode ids on its own.
    const inspected = await inspectTrajectories(folders.filter((d) => existsSync(d)));
    const duplicates = Math.max(
      [...byIndex.values()].reduce((a, n) => a + n - 1, 0) + [...byIndex.keys()].filter((i) => i < 0 || i >= o.episodes).length,
      inspected.duplicates.reduce((a, d) => a + d.occurrences.length - 1, 0),
    );
    const unreadableByAvrocat: string[] = [];
    for (const f of files) {
      const r = await run("avrocat", [f], { maxBuffer: 64 * 1024 * 1024 }).catch((e: Error) => ({ stdout: "", stderr: e.message }));
      if (r.stdout.trim().split("\n").filter(Boolean).length !== 1) unreadableByAvrocat.push(f);
    }
    const py = "import sys, json\nfrom avro.datafile import DataFileReader\nfrom avro.io import DatumReader\nbad=[]\nfor f in sys.argv[1:]:\n  try:\n    with DataFileReader(open(f,'rb'), DatumReader()) as r:\n      if len(list(r)) != 1: bad.append(f)\n  except Exception as e:\n    bad.append(f)\nprint(json.dumps(bad))\n";
    const unreadableByPython = files.length ? (JSON.parse((await run("/usr/bin/python3", ["-c", py, ...files], { maxBuffer: 64 * 1024 * 1024 })).stdout) as string[]) : [];
    const redisClient = createRedisClient(redis.url);
    let reconcile: ReconcileReport;
    try {
      reconcile = await reconcileFolders({ folders: folders.filter((d) => existsSync(d)), campaignId, arbiter: new RedisCommitArbiter(redisClient, prefix), episodes: o.episodes });
    } finally {
      redisClient.disconnect();
    }
    const quarantined = hosts.reduce((n, h) => n + countFiles(path.join(h.out, ".quarantine")), 0);
    return {
      episodes: o.episodes,
      distinct,
      duplicates,
      // An episode counts as present only when a visible file is its committed (claimed) record.
      missing: Math.max(o.episodes - distinct, reconcile.missing.length),
      quarantined,
      faults: faultLog.length,
      faultLog,
      files: files.length,
      unreadableByAvrocat,
      unreadableByPython,
      reconcile,
      campaignState: state,
      summary,
      commits,
      wallSec: (Date.now() - t0) / 1000,
    };
  } finally {
    await client?.close().catch(() => undefined);
    while (cleanups.length) await cleanups.pop()!().catch(() => undefined);
  }
}
