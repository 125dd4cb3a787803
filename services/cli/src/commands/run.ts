import { cliConfig, runTreesConfig } from "../config.ts";
import type { Command } from "commander";
import { episodeSeed, MAX_SEED } from "@farm/seeded-random";
import { addLlmOptions, llmPolicyChoice, type LlmFlags } from "./llm-options.ts";
import { collect, parseIntOption, parseResetModeOption } from "./options.ts";
import { addAgentOptions, type AgentFlags } from "./agent-flags.ts";
import type { CommandModule } from "./types.ts";
import type { TreeSourceSetting } from "@farm/worker/trees-config";

interface RunOptions extends AgentFlags, LlmFlags {
  episodes: string;
  groupSize?: string;
  policy: string;
  seed: string;
  device?: string;
  sim?: boolean;
  adbPort?: string;
  out?: string;
  apkDir: string[];
  settleMs?: string;
  frameEvery?: string;
  frameEncoding?: string;
  reset?: string;
  policyTimeoutMs?: string;
  trees?: string;
  forwarderApk?: string;
}

/**
 * `farm run <task file> --episodes N …`: episodes on one device without Redis (AndroidEnv on a desk).
 * stdout: one line per episode, then a JSON summary as the last line; logs go to stderr.
 */
export const runCommand: CommandModule = {
  register(program: Command) {
    const run = program
      .command("run")
      .description("run episodes of a task on one device (a simulated one by default), without Redis")
      .argument("<task>", "task file (.textproto)")
      .option("--episodes <n>", "number of episodes", "1")
      .option("--group-size <k>", "GRPO-style groups: each task instance (seed, params, goal) runs K times in a row; --episodes counts every run (a multiple of K)")
      .option("--policy <spec>", "random | random:<seed> | scripted:<file> | module:<file> | http:<url> | llm (with --llm-endpoint, --llm-model) | llm:<model>@<endpoint>", "random")
      .option("--seed <s>", "seed of episode 0 (0..2^32-1); episode i uses seed + i, wrapped into 32 bits like a campaign's", "0")
      .option("--device <serial>", "a device on the adb server (see --adb-port)")
      .option("--sim", "start a private adb server and one simulated device (default without --device)")
      .option("--adb-port <port>", "adb server port for --device", "5037")
      .option("--out <folder>", "write trajectories (Avro) to this folder")
      .option("--apk-dir <folder>", "folder with APKs for install steps (repeatable)", collect, [] as string[])
      .option("--settle-ms <ms>", "wait after each setup/reset step (AndroidEnv: 500)")
      .option("--policy-timeout-ms <ms>", "policy deadline: one act() (default: what the policy needs, e.g. the llm policy's request timeout × tries + backoff, else 30000)")
      .option("--frame-every <k>", "with --out: keep a frame every k steps (0 = none)")
      .option("--frame-encoding <spec>", "how frames are stored: png (default), jpeg[:Q], webp[:Q], optionally @WxH")
      .option("--trees <source>", "where screen trees come from: uiautomator (default), forwarder (AndroidEnv's accessibility forwarder, installed from --forwarder-apk where missing; else uiautomator) or auto (the forwarder where the device has it) (FARM_TREES)")
      .option("--forwarder-apk <file>", "the forwarder APK --trees forwarder installs where the package is missing (FARM_FORWARDER_APK)")
      .option("--reset <mode>", "how each episode starts: steps (default) | setup-snapshot | start-snapshot (snapshots need an emulator; --sim then starts a simulated emulator)");
    addLlmOptions(run).action(async (taskPath: string, o: RunOptions) => {
        await runAction(taskPath, o);
      });
    // Added apart from the chain above (goals, --observe, --a11y-every, --max-invalid-actions: agent-flags.ts).
    addAgentOptions(program.commands.find((c) => c.name() === "run")!, "run");
  },
};

async function runAction(taskPath: string, o: RunOptions): Promise<void> {
  const path = await import("node:path");
  const os = await import("node:os");
  // The flags are checked before the task, device, episode and policy code loads (a bad command line fails at once).
  // The worker's --trees, validated as the worker does (FARM_TREES, FARM_FORWARDER_APK).
  const treesConfig = runTreesConfig({ ...(o.trees !== undefined ? { trees: o.trees as TreeSourceSetting } : {}), ...(o.forwarderApk ? { forwarderApk: o.forwarderApk } : {}) });

  const episodes = parseIntOption("episodes", o.episodes, 1)!;
  const seed0 = parseIntOption("seed", o.seed, 0, MAX_SEED)!;
  const groupSize = parseIntOption("group-size", o.groupSize, 1, 256);
  if (groupSize !== undefined && episodes % groupSize !== 0) throw new Error(`--episodes ${episodes}: with --group-size ${groupSize} give a multiple of ${groupSize} (groups × K)`);
  const settleMs = parseIntOption("settle-ms", o.settleMs, 0);
  const policyTimeoutMs = parseIntOption("policy-timeout-ms", o.policyTimeoutMs, 100);
  const resetMode = parseResetModeOption(o.reset) ?? "steps";
  const { loadPromptTemplate, llmSpecKeyProblem } = await import("@farm/policy/settings");
  const choice = llmPolicyChoice(o.policy, o, loadPromptTemplate);
  // Before any device or request: with a key, the endpoint must be one of the key hosts.
  const keyRefused = cliConfig().llmApiKey ? llmSpecKeyProblem(choice.spec, cliConfig().llmKeyHosts) : undefined;
  if (keyRefused) throw new Error(`--policy llm: ${keyRefused}`);
  if (o.device && o.sim) throw new Error("use either --device or --sim, not both");
  const { loadTaskFile, startSnapshotRefusal, gameConfigRefusal } = await import("@farm/task");
  const { AdbDriver } = await import("@farm/adb");
  const { DeviceSession } = await import("@farm/episode");
  const { policyFromSpec } = await import("@farm/policy");
  const { createLogger } = await import("@farm/log");
  const { Releasers, runUntilSignal } = await import("@farm/lifecycle");
  const { taskInstanceFor, jobParams, createDeviceTrees } = await import("@farm/worker");
  const { agentRunOptions } = await import("./agent-options.ts");
  const logger = createLogger({ service: "farm-run", level: cliConfig().logLevel ?? "info" });
  const out = (line: string) => process.stdout.write(`${line}\n`);

  const apkDirs = [...o.apkDir.map((d) => path.resolve(d)), path.resolve(path.dirname(path.resolve(taskPath)), "apks")];
  const loaded = loadTaskFile(path.resolve(taskPath), { apkDirs });
  const agent = await agentRunOptions(o, loaded);
  const frameEvery = agent.frameEvery ?? 0;
  for (const w of loaded.warnings) logger.warn({ line: w.line, field: w.field }, w.message);
  const refused = resetMode === "start-snapshot" ? startSnapshotRefusal(loaded.task) : undefined;
  if (refused) throw new Error(`${taskPath}: --reset start-snapshot is refused: ${refused}`);
  const gameRefused = agent.gameConfigs ? gameConfigRefusal(loaded.task, resetMode) : undefined;
  if (gameRefused) throw new Error(`${taskPath}: --goals with game_config is refused: ${gameRefused}`);

  // Everything started here is released last-first, on exit and on SIGINT/SIGTERM (a second signal: exit now).
  const releasers = new Releasers();
  const cleanup = () => releasers.releaseAll({ onError: ({ what, error }) => logger.warn({ event: "run:release-failed", what, err: error.message }, "release failed") });
  await runUntilSignal(async (stop) => {
    try {
      let adbPort: number;
      let serial: string;
      let grpcEndpoints: Record<string, { address: string }> | undefined;
      if (o.device) {
        adbPort = parseIntOption("adb-port", o.adbPort, 1)!;
        serial = o.device;
      } else {
        const { startAdbServer } = await import("@farm/local-services");
        const { startSimulatedDevices } = await import("@farm/simulator");
        const adb = await startAdbServer();
        releasers.add("adb server", () => adb.close());
        adbPort = adb.port;
        // Snapshot modes need a whole emulator (console + gRPC SnapshotService); a bare device has no snapshots.
        const sim = await startSimulatedDevices({ adbPort, count: 1, ...(resetMode !== "steps" ? { emulator: { discovery: false } } : {}) });
        const e = sim.emulators[0];
        if (e?.grpc) grpcEndpoints = { [e.serial]: { address: `127.0.0.1:${e.grpc.port}` } };
        // The private device's snapshots go with it (they live in the simulator's folder under the OS tmpdir).
        if (e) releasers.add("simulated snapshots", async () => void (await Promise.all((await e.device.snapshots.list()).filter((s) => s.name.startsWith("farm-")).map((s) => e.device.snapshots.delete(s.name)))));
        releasers.add("simulated device", () => sim.close());
        serial = sim.devices[0]!.serial;
        logger.info({ serial, adbPort }, "simulated device started");
      }
      const trees = createDeviceTrees(treesConfig, { logger });
      if (trees) releasers.add("accessibility hub", () => trees.close());
      const treeReads: Record<string, number> = {};
      const driver = new AdbDriver({
        host: "127.0.0.1",
        port: adbPort,
        adbBin: cliConfig().adbBin,
        logger,
        events: { onScreenTree: (t) => void (treeReads[t.source] = (treeReads[t.source] ?? 0) + 1) },
        ...(grpcEndpoints ? { grpc: { mode: "config", endpoints: grpcEndpoints } } : {}),
        ...(trees ? { a11y: { forwarder: trees } } : {}),
      });
      releasers.add("adb driver", () => driver.close());
      const device = driver.device(serial);
      if (trees) await device.waitBootComplete(60_000);
      await trees?.prepare(device);

      let writer: import("@farm/trajectory").TrajectoryWriter | undefined;
      const campaignId = `run-${new Date().toISOString().replace(/[-:.]/g, "").slice(0, 15)}-${process.pid}`;
      if (o.out) {
        const { TrajectoryWriter } = await import("@farm/trajectory");
        writer = await TrajectoryWriter.open({ outDir: path.resolve(o.out), writerId: `run-${os.hostname().replace(/[^A-Za-z0-9_.-]/g, "_")}-${process.pid}`, frameEvery });
        releasers.add("trajectory writer", () => writer!.close());
      }
      const { episodeIdOf } = writer ? await import("@farm/trajectory") : { episodeIdOf: undefined };

      const allowedHosts = cliConfig().policyAllowedHosts;
      const policy = await policyFromSpec(choice.spec, { http: { allowedHosts }, llm: { ...choice.llm, allowedHosts, logger, ...(cliConfig().llmApiKey ? { apiKey: cliConfig().llmApiKey } : {}), ...(cliConfig().llmKeyHosts ? { keyHosts: cliConfig().llmKeyHosts } : {}) } });
      releasers.add("policy", () => policy.close());
      const session = await DeviceSession.open({
        device,
        task: loaded,
        logger,
        config: { apkDirs, ...(settleMs !== undefined ? { settleMs } : {}), ...(policyTimeoutMs !== undefined ? { policyTimeoutMs } : {}), frameEvery: writer ? frameEvery : 0, ...(o.frameEncoding !== undefined ? { frameEncoding: o.frameEncoding } : {}) },
      });
      releasers.add("device session", () => session.close());

      let steps = 0;
      let rewardSum = 0;
      let ran = 0;
      const outcomes: Record<string, number> = {};
      const causes: Record<string, number> = {};
      const resets: Record<string, number> = {};
      const scores = { scored: 0, successSum: 0, successes: 0, errors: 0 };
      const groupRewards: number[][] = [];
      for (let i = 0; i < episodes && !stop.aborted; i++) {
        if (session.state !== "ready") break;
        // With groups, the group's members share the instance: the seed, goal line and params of the group's index.
        const g = groupSize !== undefined ? Math.floor(i / groupSize) : i;
        const group = groupSize !== undefined ? { groupIndex: g, groupMember: i % groupSize, groupSize } : {};
        const ep = agent.forEpisode(g);
        // A task family: its parameters drawn from the episode's seed (or fixed by a --goals line), its set-up and checks.
        const fixedParams = jobParams(ep);
        const instance = taskInstanceFor(loaded, { campaignId, index: i, seed: episodeSeed(seed0, g), ...(fixedParams ? { fixedParams } : {}), ...(ep.goal !== undefined ? { goal: ep.goal } : {}) });
        const t = await session.runEpisode({
          seed: episodeSeed(seed0, g),
          // Members share the instance and sample apart (as the worker: member m > 0 seeds its policy anew).
          ...(groupSize !== undefined && i % groupSize > 0 ? { policySeed: (episodeSeed(seed0, g) + Math.imul(i % groupSize, 0x9e3779b1)) >>> 0 } : {}),
          index: i,
          policy,
          signal: stop,
          resetMode,
          ...ep,
          ...(instance ? { instance } : {}),
          ...(writer && episodeIdOf
            ? { sink: (tr) => writer!.append({ ...tr, ...group, episodeId: episodeIdOf(campaignId, i), campaignId, episodeIndex: i, attempt: 1, worker: os.hostname(), taskDialect: loaded.dialect }) }
            : {}),
        });
        ran++;
        if (groupSize !== undefined) (groupRewards[g] ??= []).push(t.totalReward);
        steps += t.steps.length;
        rewardSum += t.totalReward;
        outcomes[t.outcome] = (outcomes[t.outcome] ?? 0) + 1;
        causes[t.cause] = (causes[t.cause] ?? 0) + 1;
        resets[t.resetKind ?? "steps"] = (resets[t.resetKind ?? "steps"] ?? 0) + 1;
        if (t.success !== undefined || t.scoreError !== undefined) {
          scores.scored++;
          if (t.scoreError !== undefined) scores.errors++;
          else {
            scores.successSum += t.success!;
            if (t.success === 1) scores.successes++;
          }
        }
        const scored = t.scoreError !== undefined ? ` score_error=${JSON.stringify(t.scoreError)}` : t.success !== undefined ? ` success=${+t.success.toFixed(6)}` : "";
        out(`episode=${i} steps=${t.steps.length} reward=${+t.totalReward.toFixed(6)} outcome=${t.outcome} cause=${t.cause}${scored}${t.causeDetail ? ` detail=${JSON.stringify(t.causeDetail)}` : ""}`);
      }
      const summary: Record<string, unknown> = {
        episodes: ran,
        steps,
        reward_mean: ran ? Math.round((rewardSum / ran) * 1e9) / 1e9 : 0,
        outcomes,
        causes,
        reset_mode: resetMode,
        resets,
        task: loaded.task.id,
        device: serial,
        policy: `${policy.name}@${policy.version}`,
      };
      // Screen trees read, by where they came from (--trees).
      if (Object.keys(treeReads).length > 0 || trees) summary.trees = { setting: treesConfig.trees, reads: treeReads };
      if (groupSize !== undefined) {
        const whole = groupRewards.filter((r) => r.length === groupSize);
        const stds = whole.map((r) => {
          const m = r.reduce((a, b) => a + b, 0) / r.length;
          return Math.sqrt(r.reduce((a, b) => a + (b - m) ** 2, 0) / r.length);
        });
        summary.groups = { size: groupSize, complete: whole.length, uniform: whole.filter((r) => r.every((v) => v === r[0])).length, mean_std: stds.length ? Math.round((stds.reduce((a, b) => a + b, 0) / stds.length) * 1e9) / 1e9 : null };
      }
      if (scores.scored > 0) {
        const ok = scores.scored - scores.errors;
        summary.scores = { scored: scores.scored, successes: scores.successes, success_mean: ok ? Math.round((scores.successSum / ok) * 1e9) / 1e9 : null, errors: scores.errors };
      }
      const unusable = session.state === "unusable";
      if (unusable) summary.device_unusable = session.unusableReason;
      if (stop.aborted) summary.cancelled = true;
      if (o.out) summary.out = path.resolve(o.out);
      await cleanup();
      out(JSON.stringify(summary));
      if (unusable || ran < episodes) process.exitCode = 1;
    } finally {
      await cleanup();
    }
  });
}
