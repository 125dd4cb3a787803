/**
 * A `farm <command>` child process kept running the way systemd would: when it exits (crash, SIGKILL by
 * a fault, a fault hook) it is started again after a short pause, until `close()`. Its stderr (JSON logs)
 * goes to a file for reading after the run.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, type WriteStream } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { benchLogLevel } from "./settings.ts";

const FARM = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../services/cli/bin/farm.js");

export interface FarmProcessOptions {
  name: string;
  args: string[];
  /** Extra environment for start number `n` (0 = first start). */
  envFor?(n: number): Record<string, string>;
  logFile: string;
  restartDelayMs?: number;
}

export class FarmProcess {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private stopping = false;
  private readonly log: WriteStream;
  /** Starts so far (1 after the first). */
  starts = 0;
  /** Fault hooks that fired in this process (`fault:inject` lines on stderr). */
  hookFaults = 0;

  constructor(private readonly o: FarmProcessOptions) {
    this.log = createWriteStream(o.logFile, { flags: "a" });
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): void {
    const n = this.starts++;
    const child = spawn(process.execPath, [FARM, ...this.o.args], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, FARM_LOG_LEVEL: benchLogLevel("info"), ...this.o.envFor?.(n) },
    });
    this.child = child;
    this.log.write(`--- start ${n} pid ${child.pid} at ${Date.now()}\n`);
    child.stdout!.on("data", (d: Buffer) => this.log.write(d));
    child.stderr!.on("data", (d: Buffer) => {
      if (d.includes("fault:inject")) this.hookFaults += d.toString().split("fault:inject").length - 1;
      this.log.write(d);
    });
    this.exited = new Promise((resolve) =>
      child.once("exit", (code, signal) => {
        this.log.write(`--- exit code ${code} signal ${signal} at ${Date.now()}\n`);
        resolve();
        if (!this.stopping) setTimeout(() => !this.stopping && this.start(), this.o.restartDelayMs ?? 300);
      }),
    );
  }

  signal(sig: NodeJS.Signals): void {
    if (this.child && this.child.exitCode === null && this.child.signalCode === null) this.child.kill(sig);
  }

  /** SIGTERM (drain) and wait; SIGKILL after `graceMs`. No restart afterwards. */
  async close(graceMs = 30_000): Promise<void> {
    this.stopping = true;
    this.signal("SIGCONT");
    this.signal("SIGTERM");
    const t = setTimeout(() => this.signal("SIGKILL"), graceMs);
    await this.exited;
    clearTimeout(t);
    await new Promise<void>((r) => this.log.end(() => r()));
  }
}
