/** The simulated Android behind one simulated emulator: its shell, system state, apps and faults. */
import { AndroidSystem } from "./system/android-system.ts";
import { ShellInterpreter } from "./shell/interpreter.ts";
import { findCommand } from "./commands/registry.ts";
import type { ShellIO } from "./shell/io.ts";
import type { Faults } from "./system/faults.ts";
import type { FileStat, DirEntry } from "./system/file-system.ts";
import { flatComponent } from "./system/components.ts";
import type { Logger } from "@farm/log";
import type { AppCatalog } from "./app-contract.ts";

export interface SimAndroidOptions {
  serial: string;
  seed: number;
  /** Default 360x640 (portrait). */
  screen?: { width: number; height: number };
  /** Wall clock in ms (default Date.now); logcat timestamps use it. */
  now?: () => number;
  /** The host-side log of device services (the accessibility forwarder's connection). */
  logger?: Logger;
  /** The app implementations by id (apps/registry.ts `appFactoryFor`): handed down, as android/ sits below apps/. */
  apps: AppCatalog;
}

export interface SimFs {
  stat(path: string): FileStat | undefined;
  list(dir: string): DirEntry[] | undefined;
  read(path: string): Uint8Array | undefined;
  write(path: string, data: Uint8Array, mode: number, mtimeSec: number): void;
}

export class SimAndroid {
  readonly fs: SimFs;
  readonly faults: Faults;
  /** Device internals, for tests and tools in this library. */
  readonly system: AndroidSystem;
  private readonly shell: ShellInterpreter;
  /** Each stream's stop signal (stopSignal), while the stream lives. */
  private readonly stops = new WeakMap<AbortSignal, AbortSignal>();

  constructor(opts: SimAndroidOptions) {
    const screen = opts.screen ?? { width: 360, height: 640 };
    if (!(screen.width > 0 && screen.height > 0)) throw new Error(`invalid screen size ${screen.width}x${screen.height}`);
    this.system = new AndroidSystem({ serial: opts.serial, seed: opts.seed, screen, now: opts.now ?? Date.now, apps: opts.apps, ...(opts.logger ? { logger: opts.logger } : {}) });
    this.fs = this.system.fs;
    this.faults = this.system.faults;
    const sys = this.system;
    this.shell = new ShellInterpreter({
      sys,
      findCommand,
      latencyMs: (cls) => sys.faults.latencyMs(cls),
    });
  }

  /** Runs one shell command line (an empty line reads commands from stdin); resolves with the exit code. */
  async run(commandLine: string, io: ShellIO): Promise<number> {
    try {
      return await this.shell.run(commandLine, {
        out: io.write.bind(io),
        err: io.writeErr.bind(io),
        stdin: io.stdin,
        signal: this.stopSignal(io.signal),
      });
    } catch (e) {
      // A bug in a simulated command must not take the transport down: report it like a crashing tool.
      io.writeErr(`/system/bin/sh: internal error: ${e instanceof Error ? e.message : String(e)}\n`);
      return 255;
    }
  }

  /**
   * What stops a command: its stream ends (the host closed it) or the device shuts down (close()). One per stream,
   * not per command: an interactive shell runs every line with its stream's signal, and a controller with two
   * listeners costs ~7 µs a line.
   */
  private stopSignal(stream: AbortSignal): AbortSignal {
    const known = this.stops.get(stream);
    if (known) return known;
    const stop = new AbortController();
    const closed = this.system.closedSignal;
    // The reason passed on: abort() without one makes a DOMException (and its stack) per stream.
    if (stream.aborted || closed.aborted) stop.abort(stream.aborted ? stream.reason : closed.reason);
    else {
      const onClosed = (): void => stop.abort(closed.reason);
      // The device listener goes when the stream ends, so streams by the thousand leave none behind.
      stream.addEventListener("abort", () => {
        closed.removeEventListener("abort", onClosed);
        stop.abort(stream.reason);
      }, { once: true });
      closed.addEventListener("abort", onClosed, { once: true });
    }
    this.stops.set(stream, stop.signal);
    return stop.signal;
  }

  /**
   * adbd's `root:` / `unroot:` (daemon/restart_service.cpp): already in the asked state → say so;
   * `root` on a build that is not debuggable → refused; else set `service.adb.root` and restart.
   */
  restartAdbd(mode: "root" | "unroot"): { message: string; restart: boolean } {
    const props = this.system.props;
    const root = this.system.shellIsRoot();
    if (mode === "root") {
      if (root) return { message: "adbd is already running as root\n", restart: false };
      if (props.get("ro.debuggable") !== "1") return { message: "adbd cannot run as root in production builds\n", restart: false };
      props.set("service.adb.root", "1");
      return { message: "restarting adbd as root\n", restart: true };
    }
    if (!root) return { message: "adbd not running as root\n", restart: false };
    props.set("service.adb.root", "0");
    return { message: "restarting adbd as non root\n", restart: true };
  }

  /** `pkg/pkg.Activity` in front; the launcher's (`com.android.launcher3/com.android.launcher3.Launcher`) when no app is. */
  currentActivity(): string {
    return flatComponent(this.system.activities.currentComponent());
  }

  /** The foreground app's own state (2048: grid, score, over; Catch: lives, ball, paddle, …; Notes: screen, target), or undefined. */
  appState(): unknown {
    return this.system.activities.foregroundProcess()?.app.state?.();
  }

  /**
   * BENCHMARK-ONLY ground truth (no real device can tell this; a settle policy must not read it): when
   * the screen settled for every input delivered up to `atMs` — the end of every transition they
   * started (screen, dialog, keyboard, fling, a slow list's load); `Infinity` while one never ends;
   * undefined when no input came by then. Device clock: the `now()` of this device (Date.now by default).
   */
  settledAt(atMs: number): number | undefined {
    return this.system.settle.settledAt(atMs);
  }

  /** BENCHMARK-ONLY: the last inputs (up to 512, oldest first) with when each one's effect was complete. */
  settleHistory(): { inputAt: number; settledAt: number }[] {
    return this.system.settle.history();
  }

  /** Installs simulated APK bytes directly (what `pm install` does), for test and demo set-up. */
  installApk(bytes: Uint8Array): { ok: true; packageName: string } | { ok: false; code: string } {
    const r = this.system.packages.install(bytes);
    if (!r.ok) return r;
    this.system.activities.forceStop(r.pkg.name);
    return { ok: true, packageName: r.pkg.name };
  }

  /** The current screen as RGBA, rendered on demand, as the display shows it (follows the rotation). */
  framebuffer(): { width: number; height: number; rgba: Uint8Array } {
    return this.system.displayFrame();
  }

  /** Stops app timers and open logcat followers; idempotent. */
  close(): void {
    this.system.close();
  }
}
