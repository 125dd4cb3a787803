/**
 * Named benchmark scenarios for `npx farm bench <name>`. Each is loaded lazily so one scenario's
 * dependencies never slow another. A scenario prints its figures and ends with one `key=value` line.
 */
import type { Scenario } from "./scenario.ts";

export type { BenchOptions, Scenario } from "./scenario.ts";

/** One option of a scenario, as `farm bench <name>` declares it to the option parser. */
export interface BenchOptionSpec {
  /** Commander's flag syntax, e.g. `--devices <n>`; the scenario reads it as `opts.devices`. */
  flags: string;
  description: string;
}

export interface ScenarioEntry {
  describe: string;
  options: readonly BenchOptionSpec[];
  load(): Promise<Scenario>;
}

const profile: BenchOptionSpec = { flags: "--profile <name>", description: "simulator latency profile: instant | emulator-adb | emulator-grpc (default instant)" };

/** Declared here (not in the scenario modules) so `farm bench --help` and option checking load no scenario. */
export const scenarios: Record<string, ScenarioEntry> = {
  a11y: {
    describe: "the screen as a tree: Device.screenTree from uiautomator dump and from the accessibility forwarder, at emulator-grpc and instant (one simulated device)",
    options: [
      { flags: "--samples <n>", description: "uiautomator trees read at emulator-grpc (default 20)" },
      { flags: "--instant-samples <n>", description: "trees read per source at instant, and forests at emulator-grpc (default 500)" },
    ],
    load: () => import("./bench-a11y.ts").then((m) => m.scenario),
  },
  agent: {
    describe: "GUI-agent episodes: N simulated emulators run the notes task with the llm policy against the local stand-in (fixed answer delay), the screen read as a tree every step; the farm's own time per step beside the model's and the device's",
    options: [
      { flags: "--devices <n>", description: "simulated emulators on the one worker host (default 16)" },
      { flags: "--episodes <n>", description: "episodes of the campaign (default 8 per device; the notes task takes 4 steps when solved)" },
      { flags: "--delay-ms <ms>", description: "the stand-in model's time per answer (default 50)" },
      { flags: "--a11y-every <n>", description: "record the tree every N steps (default 1; the policy reads it every step anyway)" },
      { flags: "--max-steps <n>", description: "max_episode_steps (default 20)" },
      { flags: "--screenshot <on|off>", description: "send the screenshot to the model (default off: a text-only model)" },
      profile,
    ],
    load: () => import("./bench-agent.ts").then((m) => m.scenario),
  },
  settle: {
    describe: "settle policies (issue 36): the scripted solutions of goal tasks on simulated emulators at the emulator-grpc motion profile under each settle policy; steps per device-hour, stale observations (by the simulator's ground truth), settle time, success; one line per policy, the last for events",
    options: [
      { flags: "--devices <n>", description: "simulated emulators, in this process (default 4; each runs one family)" },
      { flags: "--episodes-per-device <n>", description: "episodes per device and policy (default 2)" },
      { flags: "--policies <list>", description: "comma-separated settle specs (default none,fixed:0,fixed:500,androidworld,frames,events)" },
      { flags: "--seed <n>", description: "seed of the first episode (default 1)" },
      { flags: "--trees <source>", description: "how the screen is read as a tree: forwarder (AndroidEnv's accessibility forwarder; default) | uiautomator (dump, which waits for an idle screen itself)" },
    ],
    load: () => import("./bench-settle.ts").then((m) => m.scenario),
  },
  adb: {
    describe: "adb round trips: action channel vs adbkit stream per call vs adb CLI per call (one simulated device)",
    options: [
      { flags: "--samples <n>", description: "calls measured per method (default 3000)" },
      { flags: "--warmup <n>", description: "calls before measuring (default 100)" },
      profile,
      { flags: "--sim <mode>", description: "where the simulated device runs: child | in-process (default child)" },
    ],
    load: () => import("./bench-adb.ts").then((m) => m.scenario),
  },
  avro: {
    describe: "Avro trajectories: TrajectoryWriter to disk vs raw avsc BlockEncoder to a null sink (rec/s, MB/s, with and without frames)",
    options: [
      { flags: "--codec <name>", description: "null | deflate | snappy (default deflate)" },
      { flags: "--seconds <s>", description: "seconds measured per variant (default 2)" },
      { flags: "--steps <n>", description: "steps per episode record (default 100)" },
      { flags: "--frame-every <k>", description: "a PNG frame every k steps in the frame variants (default 5)" },
      { flags: "--frame-size <px>", description: "frame width and height (default 48)" },
    ],
    load: () => import("./bench-avro.ts").then((m) => m.scenario),
  },
  teleop: {
    describe: "a person's view of a device in the browser: one simulated emulator's screen through the operator page in headless Chromium, at instant and emulator-grpc: frames/s, capture → paint latency, click → first frame of its effect",
    options: [
      { flags: "--actions <n>", description: "clicks on a still screen (default 20)" },
      { flags: "--seconds <s>", description: "seconds a moving screen is watched (default 4)" },
      { flags: "--profile <name>", description: "only this latency profile: instant | emulator-grpc (default: both, emulator-grpc last)" },
    ],
    load: () => import("./bench-teleop.ts").then((m) => m.scenario),
  },
  "policy-batch": {
    describe: "remote policies: a campaign against the reference Python policy server, unbatched (http:) vs batched (http-batch:), requests per step and steps/s",
    options: [
      { flags: "--devices <n>", description: "simulated emulators on the one worker host (default 32)" },
      { flags: "--episodes <n>", description: "episodes per mode (default = devices)" },
      { flags: "--max-steps <n>", description: "max_episode_steps (default 30)" },
      { flags: "--window-ms <n>", description: "the host batcher's window (FARM_POLICY_BATCH_MS, default 5)" },
      { flags: "--pixels <mode>", description: "none | png | rgb: how the policy gets the screen (default none)" },
    ],
    load: () => import("./bench-policy-batch.ts").then((m) => m.scenario),
  },
  net: {
    describe: "the farm across a network: worker hosts in their own namespaces reach Redis over veth links with an added round trip, against the same lab without it (needs root)",
    options: [
      { flags: "--rtt-ms <ms>", description: "round trip added between each host and Redis (default 1)" },
      { flags: "--hosts <n>", description: "worker hosts, each in its own namespace (default 4)" },
      { flags: "--devices-per-host <n>", description: "FakeDevice-backed devices per host (default 64)" },
      { flags: "--step-ms <ms>", description: "a device's time per step, an emulator's pace (default 100)" },
      { flags: "--step-jitter <pct>", description: "how much a step's time varies around --step-ms (default 50)" },
      { flags: "--max-steps <n>", description: "max_episode_steps (default 30)" },
      { flags: "--episodes <n>", description: "episodes measured per run (default 2 per device)" },
      { flags: "--warmup <n>", description: "episodes run first and not measured (default 1 per device)" },
      { flags: "--census", description: "also count Redis's commands per episode by kind (MONITOR during the delayed run; slows it a little)" },
    ],
    load: () => import("./bench-net.ts").then((m) => m.scenario),
  },
  partition: {
    describe: "a silent partition while a campaign runs: one host's (or the scheduler's, or a Redis Cluster master's) link cut for --cut-s, then healed; exactly once across the hosts' folders (needs root)",
    options: [
      { flags: "--cut-s <s>", description: "how long the link stays silent (default 10)" },
      { flags: "--target <who>", description: "host | scheduler | master (a Redis Cluster in the lab, the master serving the farm's keys cut off; adds failover_s=) (default host)" },
      { flags: "--node-timeout-ms <ms>", description: "--target master: the cluster's cluster-node-timeout (default 2000)" },
      { flags: "--socket-timeout-ms <ms>", description: "--target master: the farm's REDIS_URL socket_timeout_ms (default: the link default, 10000)" },
      { flags: "--hosts <n>", description: "worker hosts, each in its own namespace (default 2)" },
      { flags: "--devices-per-host <n>", description: "FakeDevice-backed devices per host (default 8)" },
      { flags: "--step-ms <ms>", description: "a device's time per step (default 100)" },
      { flags: "--max-steps <n>", description: "max_episode_steps (default 20)" },
      { flags: "--lock-ms <ms>", description: "the jobs' lock duration on the hosts (default 30000)" },
      { flags: "--episodes <n>", description: "episodes in the campaign (default: enough to outlast the cut)" },
    ],
    load: () => import("./bench-partition.ts").then((m) => m.scenario),
  },
  chaos: {
    describe: "exactly once under faults: two hosts, one Redis (AOF); worker SIGKILL/SIGSTOP/crash hooks, adb/Redis/scheduler/simulator kills",
    options: [
      { flags: "--episodes <n>", description: "episodes in the campaign (default 300)" },
      { flags: "--devices <n>", description: "simulated emulators per host (default 3)" },
      { flags: "--max-steps <n>", description: "max_episode_steps (default 20)" },
      { flags: "--lock-ms <n>", description: "BullMQ job lock duration (default 3000)" },
      { flags: "--stalled-ms <n>", description: "stalled-job check interval (default 1500)" },
      { flags: "--window <n>", description: "episodes enqueued ahead (default 24)" },
      { flags: "--timeout-ms <n>", description: "give up after this long (default 1800000)" },
      { flags: "--keep", description: "keep logs and output folders" },
    ],
    load: () => import("./bench-chaos.ts").then((m) => m.scenario),
  },
  export: {
    describe: "Parquet export (farm trajectories export --format parquet) beside DuckDB writing the same rows",
    options: [
      { flags: "--episodes <n>", description: "episodes exported (default 300)" },
      { flags: "--steps <n>", description: "steps per episode (default 100)" },
      { flags: "--frame-every <k>", description: "a PNG frame every k steps, 0 = none (default 2)" },
      { flags: "--frame-size <px>", description: "frame width and height (default 64)" },
      { flags: "--shard-mb <n>", description: "Parquet shard size (default 100)" },
    ],
    load: () => import("./bench-export.ts").then((m) => m.scenario),
  },
  scale: {
    describe: "N devices over H worker processes on one Redis (one BullMQ Worker per host, FakeDevice-backed devices): Redis clients, Redis CPU, dispatch p50/p99, episodes/s",
    options: [
      { flags: "--devices <n>", description: "devices in all (default 100)" },
      { flags: "--hosts <n>", description: "worker processes the devices are split over (default 1)" },
      { flags: "--episodes <n>", description: "episodes in the campaign (default 3 per device)" },
      { flags: "--warmup <n>", description: "episodes of a campaign run first and not measured (default 2 per device)" },
      { flags: "--window <n>", description: "episodes of the campaign in flight, queued or running (default: one per device)" },
      { flags: "--max-steps <n>", description: "max_episode_steps (default 5)" },
      { flags: "--step-ms <n>", description: "a device's time per step (default 0: as fast as the hosts' CPU goes; 20-100 is an emulator's pace)" },
      { flags: "--step-jitter <pct>", description: "how much a step's time varies around --step-ms, in percent, uniformly (default 0; 0-90)" },
      { flags: "--settle-ms <n>", description: "wait after each setup/reset step (default 0; an emulator's is ~500)" },
      { flags: "--host-nice <n>", description: "the worker hosts' CPU priority, 0-19 (default 10: below Redis and the scheduler, which have machines of their own in a deployment; 0: all alike)" },
    ],
    load: () => import("./bench-scale.ts").then((m) => m.scenario),
  },
  farm: {
    describe: "the farm end to end: worker + N simulated emulators + Redis; episodes/s, steps/s, worker CPU per step, start latency",
    options: [
      { flags: "--devices <n>", description: "simulated emulators (default 16)" },
      { flags: "--episodes <n>", description: "episodes in the campaign (default 64)" },
      { flags: "--warmup <n>", description: "episodes run before measuring, not measured (default 4 per device)" },
      { flags: "--max-steps <n>", description: "max_episode_steps (default 50)" },
      { flags: "--settle-ms <n>", description: "settle after setup/reset steps (default 20)" },
      { flags: "--window <n>", description: "episodes enqueued ahead (default: --devices)" },
      profile,
      { flags: "--transport <grpc|adb>", description: "actions and frames over the emulator gRPC endpoint or adb (default grpc)" },
    ],
    load: () => import("./bench-farm.ts").then((m) => m.scenario),
  },
  frames: {
    describe: "frames per second recorded by one worker: adb framebuffer + PNG on the event loop vs the new path (encoded off the event loop)",
    options: [
      { flags: "--devices <n>", description: "simulated emulators (default 2)" },
      { flags: "--seconds <s>", description: "seconds measured per variant (default 5)" },
      { flags: "--screen <WxH>", description: "screen size (default 1080x1920)" },
      { flags: "--encoding <spec>", description: "frame encoding: png | jpeg[:Q] | webp[:Q], optional @WxH (default png)" },
      { flags: "--transport <grpc|adb>", description: "frames over gRPC or adb (default grpc)" },
      { flags: "--shared-frames <true|false>", description: "gRPC frames through shared memory (the MMAP transport) or in the answer (default true)" },
    ],
    load: () => import("./bench-frames.ts").then((m) => m.scenario),
  },
  remote: {
    describe: "remote environments (dm_env_rpc): Step round trip without pixels and with 360x640 pixels beside local EpisodeRun.step(), one run",
    options: [
      { flags: "--samples <n>", description: "steps measured per variant (default 600)" },
      { ...profile, description: "simulator latency profile (default instant)" },
      { flags: "--worker <where>", description: "child (default: the worker in its own process, as a Python client sees it) | in-process" },
    ],
    load: () => import("./bench-remote.ts").then((m) => m.scenario),
  },
  rollouts: {
    describe: "GRPO-style rollouts: a grouped campaign (every task instance K times) of the Wi-Fi family on simulated emulators with a stand-in policy whose version changes, read live from the campaign's stream by a learner: groups/s, group spread, stream lag, duplicates, missing",
    options: [
      { flags: "--devices <n>", description: "simulated emulators on the one worker host (default 8)" },
      { flags: "--groups <n>", description: "task instances (default 4)" },
      { flags: "--group-size <k>", description: "runs per instance (default 8)" },
      profile,
    ],
    load: () => import("./bench-rollouts.ts").then((m) => m.scenario),
  },
  reset: {
    describe: "episode reset in each mode: the task's reset steps, a setup snapshot + the reset steps, a start snapshot alone (Classic 2048, one simulated emulator)",
    options: [
      { flags: "--episodes <n>", description: "episodes per mode (default 8)" },
      { flags: "--heavy", description: "the heavy-reset task (tasks/classic_2048_heavy_reset.textproto: data cleared, APK reinstalled every reset) instead of Classic 2048" },
      { ...profile, description: "simulator latency profile (default emulator-adb)" },
      { flags: "--transport <grpc|adb>", description: "snapshots over gRPC or the console (default grpc)" },
    ],
    load: () => import("./bench-reset.ts").then((m) => m.scenario),
  },
  sim: {
    describe: "N simulated emulators in one process: memory per device and adbkit shell echo round trip (default N=64)",
    options: [
      { flags: "--devices <n>", description: "simulated emulators (default 64)" },
      { flags: "--calls <n>", description: "shell round trips measured per round (default 1000)" },
      { flags: "--warmup <n>", description: "round trips before measuring (default 50)" },
      { flags: "--rounds <n>", description: "concurrent rounds (default 10)" },
      { flags: "--shots <n>", description: "screenshot samples per kind (default 200)" },
      { flags: "--grpc <on|off>", description: "also measure the emulator gRPC endpoint (default on)" },
      profile,
    ],
    load: () => import("./bench-sim.ts").then((m) => m.scenario),
  },
  soak: {
    describe: "a long run of short episodes on one host: FDs, RSS, Redis memory and adb connections stay flat",
    options: [
      { flags: "--episodes <n>", description: "episodes in the run (default 10000)" },
      { flags: "--devices <n>", description: "simulated emulators (default 4)" },
      { flags: "--max-steps <n>", description: "max_episode_steps (default 2)" },
      { flags: "--window <n>", description: "episodes enqueued ahead (default 4 per device)" },
    ],
    load: () => import("./bench-soak.ts").then((m) => m.scenario),
  },
};
