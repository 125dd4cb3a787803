/**
 * Launches N emulators of one AVD and keeps them up: each instance boots (bounded), is health-checked
 * (getStatus answering), and is relaunched — same ports, so the same serial, when still free — when it
 * exits or crashes, hangs (the health check fails `hungAfterFailures` times in a row) or does not boot in
 * time, after an exponential backoff capped at `backoffMaxMs`. `close()` shuts every instance down.
 *
 *   const sup = new EmulatorSupervisor({ count: 2, avd: "Pixel_Sim", executable, adbPort: 5037 }, { logger, onRelaunch });
 *   sup.start();            // instances boot in the background; adb lists them as emulator-<console>
 *   await sup.close();       // gRPC setVmState(SHUTDOWN), then SIGTERM, then SIGKILL after the grace
 */
import type { Logger } from "@farm/log";
import { sleep } from "@farm/time";
import { coerceError } from "@farm/errors";
import { checkName, emulatorArgs } from "./command-line.ts";
import { EmulatorProcess } from "./emulator-process.ts";
import { adbStatusProbe, grpcStatusProbe, type StatusProbe } from "./emulator-status.ts";
import { pickEmulatorPorts, portsStillFree, type EmulatorPorts } from "./ports.ts";

export type RelaunchCause = "exited" | "hung" | "boot_timeout";

export interface LaunchConfig {
  /** How many emulators to run. */
  count: number;
  avd: string;
  /** The emulator executable. */
  executable: string;
  /** Boot every instance from this snapshot (`-snapshot NAME`). */
  snapshot?: string;
  /** The adb server the emulators register with (ANDROID_ADB_SERVER_PORT) and the fallback probe uses. */
  adbHost?: string;
  adbPort: number;
  /** Serve and use gRPC (`-grpc G`; getStatus for boot and health). Default true; false = adb getprop. */
  grpc?: boolean;
  /** First console port to try. Default 5554. */
  basePort?: number;
  bootTimeoutMs?: number;
  healthIntervalMs?: number;
  healthTimeoutMs?: number;
  hungAfterFailures?: number;
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** An instance up this long has its backoff reset. */
  stableAfterMs?: number;
  /** On stop, how long an emulator may take to shut down before SIGTERM, and again before SIGKILL. */
  stopGraceMs?: number;
  /** Added to the emulators' environment (e.g. ANDROID_AVD_HOME, XDG_RUNTIME_DIR). */
  env?: NodeJS.ProcessEnv;
  extraArgs?: readonly string[];
}

export interface RelaunchEvent {
  serial: string;
  cause: RelaunchCause;
  /** Consecutive failures of this instance (1 for the first relaunch since it was last stable). */
  failures: number;
  delayMs: number;
  detail: string;
}

export interface SupervisorHooks {
  logger: Logger;
  onRelaunch?: (e: RelaunchEvent) => void;
  onBooted?: (e: { serial: string; bootMs: number; ports: EmulatorPorts }) => void;
}

export type InstanceState = "starting" | "booting" | "running" | "backoff" | "stopped";

interface Instance {
  index: number;
  ports: EmulatorPorts | undefined;
  proc: EmulatorProcess | undefined;
  probe: StatusProbe | undefined;
  state: InstanceState;
  failures: number;
  loop: Promise<void> | undefined;
}

const DEFAULTS = {
  bootTimeoutMs: 120_000,
  healthIntervalMs: 5_000,
  healthTimeoutMs: 3_000,
  hungAfterFailures: 3,
  backoffBaseMs: 1_000,
  backoffMaxMs: 60_000,
  stableAfterMs: 60_000,
  stopGraceMs: 10_000,
};

/** Backoff before the `failures`-th consecutive relaunch: base·2^(failures−1), capped. */
export function relaunchDelayMs(failures: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, Math.min(failures - 1, 30)));
}

export class EmulatorSupervisor {
  private readonly cfg: LaunchConfig & typeof DEFAULTS;
  private readonly instances: Instance[];
  private readonly abort = new AbortController();
  private readonly taken = new Set<number>();
  private stopping: Promise<void> | undefined;

  constructor(cfg: LaunchConfig, private readonly hooks: SupervisorHooks) {
    if (!Number.isSafeInteger(cfg.count) || cfg.count < 1 || cfg.count > 64) throw new RangeError(`emulator launcher: count must be 1..64, got ${cfg.count}`);
    checkName("avd", cfg.avd);
    if (cfg.snapshot !== undefined) checkName("snapshot", cfg.snapshot);
    this.cfg = { ...DEFAULTS, ...Object.fromEntries(Object.entries(cfg).filter(([, v]) => v !== undefined)) } as LaunchConfig & typeof DEFAULTS;
    this.instances = Array.from({ length: cfg.count }, (_, index) => ({ index, ports: undefined, proc: undefined, probe: undefined, state: "starting", failures: 0, loop: undefined }));
  }

  /** Starts every instance's launch loop; returns at once (boots run in the background). */
  start(): void {
    for (const inst of this.instances) inst.loop ??= this.run(inst);
  }

  /** Serials and states, e.g. `{ "emulator-5554": "running" }` (instances without ports yet are left out). */
  states(): Record<string, InstanceState> {
    return Object.fromEntries(this.instances.filter((i) => i.ports).map((i) => [serialOf(i.ports!), i.state]));
  }

  /** Resolves once every instance is running, or rejects after `timeoutMs`. */
  async whenAllRunning(timeoutMs: number): Promise<string[]> {
    const deadline = Date.now() + timeoutMs;
    while (!this.instances.every((i) => i.state === "running")) {
      if (Date.now() > deadline) throw new Error(`emulators not all running after ${timeoutMs} ms: ${JSON.stringify(this.states())}`);
      await sleep(50);
    }
    return Object.keys(this.states());
  }

  private async run(inst: Instance): Promise<void> {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      let cause: RelaunchCause | "stopped";
      let detail = "";
      let upSince = Date.now();
      try {
        await this.launch(inst);
        upSince = Date.now();
        ({ cause, detail } = await this.watch(inst, signal));
      } catch (e) {
        if (signal.aborted) break;
        cause = "exited";
        detail = coerceError(e).message;
      }
      if (cause === "stopped" || signal.aborted) break;
      const lastOutput = inst.proc?.lastOutput(5) ?? [];
      await this.kill(inst, 2000);
      inst.failures = Date.now() - upSince >= this.cfg.stableAfterMs ? 1 : inst.failures + 1;
      const delayMs = relaunchDelayMs(inst.failures, this.cfg.backoffBaseMs, this.cfg.backoffMaxMs);
      const serial = inst.ports ? serialOf(inst.ports) : `instance-${inst.index}`;
      inst.state = "backoff";
      this.hooks.logger.warn({ event: "emulator:relaunch", serial, avd: this.cfg.avd, cause, failures: inst.failures, delayMs, detail, lastOutput }, `emulator ${cause}; relaunching`);
      this.hooks.onRelaunch?.({ serial, cause, failures: inst.failures, delayMs, detail });
      await sleep(delayMs, signal).catch(() => undefined);
    }
    inst.state = "stopped";
  }

  private async launch(inst: Instance): Promise<void> {
    inst.state = "starting";
    // Keep the serial across relaunches when its ports are free again; else take new ones.
    if (!inst.ports || !(await portsStillFree(inst.ports))) {
      if (inst.ports) for (const p of Object.values(inst.ports)) this.taken.delete(p);
      inst.ports = await pickEmulatorPorts(this.taken, this.cfg.basePort);
      for (const p of Object.values(inst.ports)) this.taken.add(p);
    }
    const grpcOn = this.cfg.grpc !== false;
    inst.probe?.close();
    inst.probe = grpcOn ? grpcStatusProbe(inst.ports.grpc) : adbStatusProbe({ host: this.cfg.adbHost ?? "127.0.0.1", port: this.cfg.adbPort }, serialOf(inst.ports));
    inst.proc = new EmulatorProcess({
      executable: this.cfg.executable,
      args: emulatorArgs({ avd: this.cfg.avd, ports: inst.ports, ...(this.cfg.snapshot ? { snapshot: this.cfg.snapshot } : {}), grpc: grpcOn, ...(this.cfg.extraArgs ? { extraArgs: this.cfg.extraArgs } : {}) }),
      env: { ...process.env, ...this.cfg.env, ANDROID_ADB_SERVER_PORT: String(this.cfg.adbPort) },
      orphanGraceSec: Math.ceil(this.cfg.stopGraceMs / 1000),
    });
    inst.state = "booting";
  }

  /** Boot (bounded), then health checks, until the emulator exits, hangs, or we stop. */
  private async watch(inst: Instance, signal: AbortSignal): Promise<{ cause: RelaunchCause | "stopped"; detail: string }> {
    const proc = inst.proc!;
    const probe = inst.probe!;
    let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    void proc.exited.then((x) => (exited = x));
    const exitDetail = () => `exit ${exited?.signal ?? exited?.code}`;
    const t0 = Date.now();
    let lastError = "";
    // Boot: poll until booted, the deadline, or the process ends.
    for (;;) {
      if (signal.aborted) return { cause: "stopped", detail: "" };
      if (exited) return { cause: "exited", detail: `${exitDetail()} while booting` };
      const r = await probe.probe(Math.min(this.cfg.healthTimeoutMs, 2000));
      if (r.ok && r.booted) break;
      if (!r.ok) lastError = r.error;
      if (Date.now() - t0 > this.cfg.bootTimeoutMs) return { cause: "boot_timeout", detail: `not booted after ${this.cfg.bootTimeoutMs} ms${lastError ? ` (${lastError})` : ""}` };
      await sleep(200, signal).catch(() => undefined);
    }
    inst.state = "running";
    const serial = serialOf(inst.ports!);
    this.hooks.logger.info({ event: "emulator:booted", serial, avd: this.cfg.avd, bootMs: Date.now() - t0, ports: inst.ports }, "launched emulator booted");
    this.hooks.onBooted?.({ serial, bootMs: Date.now() - t0, ports: inst.ports! });
    // Health: getStatus must answer; `hungAfterFailures` misses in a row = hung.
    let misses = 0;
    for (;;) {
      await Promise.race([sleep(this.cfg.healthIntervalMs, signal).catch(() => undefined), proc.exited]);
      if (signal.aborted) return { cause: "stopped", detail: "" };
      if (exited) return { cause: "exited", detail: exitDetail() };
      const r = await probe.probe(this.cfg.healthTimeoutMs);
      if (exited) return { cause: "exited", detail: exitDetail() };
      misses = r.ok ? 0 : misses + 1;
      if (!r.ok && misses >= this.cfg.hungAfterFailures) return { cause: "hung", detail: `${misses} health checks failed: ${r.error}` };
    }
  }

  /** Shut down: ask over gRPC, then SIGTERM, then SIGKILL. */
  private async kill(inst: Instance, graceMs: number): Promise<void> {
    const proc = inst.proc;
    if (!proc) return;
    if (proc.running && inst.state === "running" && (await inst.probe?.requestShutdown(Math.min(graceMs, 3000)))) {
      if (await proc.groupGone(graceMs)) return;
    }
    await proc.terminate(graceMs);
  }

  /** Stops relaunching and shuts every emulator down (gRPC SHUTDOWN, SIGTERM, SIGKILL). Idempotent. */
  close(): Promise<void> {
    this.stopping ??= (async () => {
      this.abort.abort();
      await Promise.all(this.instances.map((i) => i.loop));
      await Promise.all(
        this.instances.map(async (inst) => {
          await this.kill(inst, this.cfg.stopGraceMs);
          inst.probe?.close();
          inst.state = "stopped";
        }),
      );
      this.hooks.logger.info({ event: "emulator:all-stopped", count: this.instances.length }, "launched emulators shut down");
    })();
    return this.stopping;
  }
}

export const serialOf = (p: EmulatorPorts): string => `emulator-${p.console}`;
