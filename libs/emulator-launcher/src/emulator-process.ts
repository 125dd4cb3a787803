/**
 * One emulator process, started through bin/parent-watch.sh in its own process group:
 *   - the group lets us signal the emulator and whatever it started at once (`kill(-pgid)`);
 *   - the watch script's stdin is a pipe only we hold, so if the worker dies — even by SIGKILL — the
 *     pipe closes and the script stops the emulator (Node has no parent-death signal of its own);
 *   - an `exit` hook of this module SIGKILLs every group still running when the worker exits normally
 *     or by an uncaught exception, without waiting for the pipe.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { sleep } from "@farm/time";

const WATCH_SCRIPT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../bin/parent-watch.sh");
const OUTPUT_LINES_KEPT = 30;

export interface SpawnEmulatorOptions {
  /** The emulator executable (an SDK's `emulator/emulator`, or the simulated one). */
  executable: string;
  args: string[];
  /** Its environment (ANDROID_ADB_SERVER_PORT names the adb server it registers with). */
  env: NodeJS.ProcessEnv;
  /** After the worker dies, how long the emulator has between SIGTERM and SIGKILL. */
  orphanGraceSec?: number;
}

const live = new Set<EmulatorProcess>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const p of live) p.signalGroup("SIGKILL");
  });
}

export class EmulatorProcess {
  /** Resolves with the exit code (or the signal's name) once the emulator has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly child: ChildProcess;
  private readonly output: string[] = [];
  private done = false;

  constructor(o: SpawnEmulatorOptions) {
    installExitHook();
    this.child = spawn(WATCH_SCRIPT, [String(o.orphanGraceSec ?? 10), o.executable, ...o.args], {
      env: o.env,
      detached: true, // its own process group, so a signal reaches the whole tree
      stdio: ["pipe", "pipe", "pipe"],
    });
    live.add(this);
    this.exited = new Promise((resolve) => {
      this.child.once("exit", (code, signal) => {
        this.done = true;
        live.delete(this);
        // Whatever the emulator left behind in its group goes with it.
        this.signalGroup("SIGKILL");
        resolve({ code, signal });
      });
      this.child.once("error", (e) => {
        this.keep(`spawn failed: ${e.message}`);
        if (!this.done) {
          this.done = true;
          live.delete(this);
          resolve({ code: 127, signal: null });
        }
      });
    });
    for (const s of [this.child.stdout, this.child.stderr]) {
      let partial = "";
      s?.setEncoding("utf8");
      s?.on("data", (chunk: string) => {
        const lines = (partial + chunk).split("\n");
        partial = lines.pop() ?? "";
        for (const l of lines) this.keep(l);
      });
    }
    this.child.stdin?.on("error", () => undefined);
  }

  /** The process group id (the watch script's pid); undefined if the spawn failed. */
  get pgid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return !this.done;
  }

  /** The last lines the emulator printed (for a boot failure's log line). */
  lastOutput(n = 10): string[] {
    return this.output.slice(-n);
  }

  private keep(line: string): void {
    if (line.trim() === "") return;
    this.output.push(line.slice(0, 300));
    if (this.output.length > OUTPUT_LINES_KEPT) this.output.shift();
  }

  /** Signals every process of the group; false if none is left. */
  signalGroup(sig: NodeJS.Signals | 0): boolean {
    const pgid = this.child.pid;
    if (pgid === undefined) return false;
    try {
      process.kill(-pgid, sig);
      return true;
    } catch {
      return false;
    }
  }

  /** True while any process of the group is alive (the emulator may outlive the watch script on SIGTERM). */
  groupAlive(): boolean {
    return this.signalGroup(0);
  }

  /** SIGTERM to the group, SIGKILL after `graceMs`; resolves once no process of the group is left. */
  async terminate(graceMs: number): Promise<void> {
    this.signalGroup("SIGTERM");
    if (await this.groupGone(graceMs)) return;
    this.signalGroup("SIGKILL");
    await this.groupGone(5000);
  }

  /** Waits up to `ms` for the script to exit and the group to empty; true if it did. */
  async groupGone(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    for (;;) {
      if (this.done && !this.groupAlive()) return true;
      if (Date.now() >= deadline) return false;
      await sleep(25);
    }
  }
}
