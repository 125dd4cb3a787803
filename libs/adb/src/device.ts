/** `Device` over an adb server with adbkit: every operation is deadline-bound and returns trouble as data. */
import { encodeFrame, rgbaToRgb } from "@farm/frames";
import { TASK_LIMITS, type AdbRequest, type AppScreen } from "@farm/task";
import { ShellActionChannel } from "./action-channel.ts";
import { matchViewHierarchy } from "./app-screen.ts";
import { waitForDevice } from "@farm/adb-wire";
import { sleep } from "@farm/time";
import { guardedCall, hostCall, report, shellExec, stateCall, type DeviceCtx } from "./exec.ts";
import { serviceOutput } from "./shell-socket.ts";
import { ShellLogcatStream } from "./logcat.ts";
import { parsePmList, parseWmSize } from "./parsers.ts";
import { shQuote } from "@farm/shell-words";
import { fail, stepResult } from "./result.ts";
import { CaptureError, captureFramebuffer } from "./framebuffer-socket.ts";
import { isPng } from "./screenshot.ts";
import { currentActivity, handlerFor, createStepCtx, stepHandlers } from "./steps.ts";
import { deviceSnapshot, type SnapshotOp } from "./snapshots.ts";
import { GrpcActionChannel } from "./grpc/action-channel.ts";
import type { GrpcEndpoint } from "./grpc/endpoints.ts";
import { grpcScreenshot } from "./grpc/screenshot.ts";
import type { A11yEventStream, ActionChannel, AppScreenMatch, CapturedFrame, Device, FrameRequest, DeviceState, LogcatOptions, Screenshot, ShellResult, StepResult } from "./types.ts";
import { checkActivity } from "./validate.ts";
import { readScreenTree, type A11yConfig, type ScreenTreeRequest } from "./a11y/read-tree.ts";
import type { ScreenTree, ScreenTreeFailure } from "./a11y/types.ts";
import { openA11yEventStream } from "./a11y/events-stream.ts";

const OK = { status: "ok", message: "" };
/** A step's own deadline: one day (the task loader's bound), far below what setTimeout can hold (24.8 days). */
const MAX_STEP_TIMEOUT_SEC = TASK_LIMITS.maxDurationSec;
/** Between reads of `sys.boot_completed` while a device boots. */
const BOOT_POLL_MS = 200;

function isResult(v: unknown): v is { status: string; message: string } {
  return typeof v === "object" && v !== null && "status" in v && "message" in v && !(v instanceof Uint8Array);
}

export type ActionChannelFactory = (serial: string) => Promise<ActionChannel | undefined>;

export class AdbDevice implements Device {
  constructor(
    private readonly ctx: DeviceCtx,
    private readonly actionChannelFactory?: ActionChannelFactory,
    private readonly a11y?: A11yConfig,
  ) {}

  get serial(): string {
    return this.ctx.serial;
  }

  /** Reports one public operation (metrics hook + log): `status` of a result, or ok for a value. */
  private async timed<T>(op: string, work: () => Promise<T>): Promise<T> {
    const t0 = performance.now();
    const v = await work();
    const st = isResult(v) ? v : OK;
    report(this.ctx, op, st.status, performance.now() - t0, st.message);
    return v;
  }

  private timeout(opts?: { timeoutMs?: number }): number {
    return opts?.timeoutMs ?? this.ctx.cfg.queryTimeoutMs;
  }

  async execute(request: AdbRequest, opts: { timeoutMs?: number; apkDirs?: string[] } = {}): Promise<StepResult> {
    const t0 = performance.now();
    const name = (request?.cmd as { command?: string } | undefined)?.command ?? "";
    const finish = (r: StepResult): StepResult => {
      const durationMs = performance.now() - t0;
      report(this.ctx, `step:${handlerFor(name) ? name : "unknown"}`, r.status, durationMs, r.message);
      return { ...r, durationMs };
    };
    if (!(request.timeoutSec >= 0)) return finish(fail("failed_precondition", `${name}: negative timeout_sec ${request.timeoutSec}`));
    if (!(request.timeoutSec <= MAX_STEP_TIMEOUT_SEC)) return finish(fail("failed_precondition", `${name}: timeout_sec ${request.timeoutSec} is beyond ${MAX_STEP_TIMEOUT_SEC} s (a timer cannot hold it)`));
    // The step's own deadline, else the driver default; a caller's `opts.timeoutMs` can only shorten it.
    const own = request.timeoutSec > 0 ? Math.ceil(request.timeoutSec * 1000) : this.ctx.cfg.defaultTimeoutMs;
    const timeoutMs = opts.timeoutMs !== undefined && opts.timeoutMs > 0 ? Math.min(own, opts.timeoutMs) : own;
    const handler = handlerFor(name);
    if (!handler) return finish(fail("unknown_command", `adb request kind ${JSON.stringify(name)} is not supported by the farm driver (known: ${Object.keys(stepHandlers).join(", ")})`));
    const sctx = createStepCtx(this.ctx, timeoutMs, opts.apkDirs ?? this.ctx.cfg.apkDirs);
    try {
      return finish(await handler(request.cmd, sctx));
    } catch (e) {
      // A bug in a handler must still come back as data.
      return finish(fail("internal_error", `${name}: driver error: ${e instanceof Error ? e.message : String(e)}`));
    }
  }

  shell(commandLine: string, opts?: { timeoutMs?: number }): Promise<ShellResult> {
    return this.timed("shell", () => shellExec(this.ctx, commandLine, opts?.timeoutMs ?? this.ctx.cfg.defaultTimeoutMs));
  }

  /** The device's state on the adb server: `device`, `offline`, `unauthorized`, … or `gone` when the server does not list it. */
  state(opts?: { timeoutMs?: number }): Promise<DeviceState | StepResult> {
    return this.timed("state", () => this.stateQuiet(opts));
  }

  private async stateQuiet(opts?: { timeoutMs?: number }): Promise<DeviceState | StepResult> {
    const r = await stateCall(this.ctx, this.timeout(opts));
    if (r.ok) return r.value as DeviceState;
    if (r.status === "adb_error" && /not found/.test(r.message)) return "gone";
    return stepResult(r.status, r.message, "", r.durationMs);
  }

  /**
   * Liveness: a trivial shell round trip (`echo`) within the deadline. A hung device still shows as
   * `device` on the server; this is how the driver tells it stopped answering (`timeout`).
   */
  probe(opts?: { timeoutMs?: number }): Promise<StepResult> {
    return this.timed("probe", () => this.probeQuiet(opts));
  }

  private async probeQuiet(opts?: { timeoutMs?: number }): Promise<StepResult> {
    const r = await shellExec(this.ctx, "echo farm-probe", this.timeout(opts), "probe");
    if (r.status === "ok" && r.stdout.trim() !== "farm-probe") return stepResult("internal_error", `probe: unexpected answer ${JSON.stringify(r.stdout.slice(0, 100))}`, r.stdout, r.durationMs);
    return stepResult(r.status, r.message, r.stdout, r.durationMs);
  }

  /** Waits for the device to appear on the server, then for `sys.boot_completed=1`. */
  waitBootComplete(timeoutMs: number): Promise<StepResult> {
    return this.timed("wait_boot", () => this.waitBootQuiet(timeoutMs));
  }

  private async waitBootQuiet(timeoutMs: number): Promise<StepResult> {
    const t0 = performance.now();
    const left = () => timeoutMs - (performance.now() - t0);
    const late = () => stepResult("timeout", `device '${this.serial}' did not finish booting within ${timeoutMs} ms`, "", performance.now() - t0);
    const listed = await hostCall(this.ctx, "wait-boot", timeoutMs, (server, o) => waitForDevice(server, this.serial, o));
    if (!listed.ok) return listed.status === "timeout" ? late() : stepResult(listed.status, listed.message, "", performance.now() - t0);
    // Listed; now `sys.boot_completed` (what adb's own wait-for-device and AndroidEnv's boot check read).
    for (;;) {
      const r = await shellExec(this.ctx, "getprop sys.boot_completed", Math.max(1, Math.min(left(), this.ctx.cfg.queryTimeoutMs)), "wait-boot:getprop");
      if (r.status === "ok" && r.stdout.trim() === "1") return stepResult("ok", "", "", performance.now() - t0);
      if (left() <= BOOT_POLL_MS) return late();
      await sleep(BOOT_POLL_MS);
    }
  }

  /** The device's emulator gRPC endpoint when the driver's gRPC transport is on and one is known; read when asked. */
  grpcEndpoint(): GrpcEndpoint | undefined {
    return this.ctx.grpc?.resolve(this.serial);
  }

  async openActionChannel(): Promise<ActionChannel> {
    const ep = this.actionChannelFactory ? undefined : this.grpcEndpoint();
    if (ep) {
      this.ctx.cfg.logger.info({ event: "adb:action-channel", serial: this.serial, transport: "grpc", endpoint: ep.address }, "actions over the emulator's gRPC");
      return new GrpcActionChannel(this.ctx, ep);
    }
    if (this.actionChannelFactory) {
      try {
        const custom = await this.actionChannelFactory(this.serial);
        if (custom) return custom;
      } catch (e) {
        // A faster transport that cannot open falls back to the shell stream rather than failing the caller.
        this.ctx.cfg.logger.warn({ event: "adb:action-channel-factory-failed", serial: this.serial, err: String(e) }, "custom action channel failed; using the shell stream");
      }
    }
    const ch = new ShellActionChannel(this.ctx);
    // Opening early is an optimisation; a failure here shows up as the first action's result.
    await ch.open();
    return ch;
  }

  async openAccessibilityEvents(opts?: { timeoutMs?: number }): Promise<A11yEventStream | StepResult> {
    const r = await this.timed("a11y_events", () => openA11yEventStream(this.ctx, this.timeout(opts)));
    return "onEvent" in r ? r : stepResult(r.status, r.message);
  }

  openLogcat(opts: LogcatOptions): Promise<ShellLogcatStream> {
    return ShellLogcatStream.open(this.ctx, opts);
  }

  /** §7.4: activity from `am stack list`, then the view-hierarchy path over `dumpsys activity <pkg> <pkg>`. */
  async matchAppScreen(screen: AppScreen, opts?: { timeoutMs?: number }): Promise<AppScreenMatch> {
    const r = await this.timed("app_screen", () => this.matchAppScreenDetailed(screen, opts));
    return r.match;
  }

  /** The match plus the status/message of the device command that failed, if one did. */
  async matchAppScreenDetailed(screen: AppScreen, opts?: { timeoutMs?: number }): Promise<{ match: AppScreenMatch; status: StepResult["status"]; message: string }> {
    const done = (match: AppScreenMatch, status: StepResult["status"] = "ok", message = "") => ({ match, status, message });
    if (screen.activity === "") return done("EMPTY_EXPECTED_ACTIVITY");
    const sctx = createStepCtx(this.ctx, this.timeout(opts), []);
    const cur = await currentActivity(sctx);
    if (cur.status !== "ok" || cur.data?.kind !== "current_activity") return done("FAILED_ACTIVITY_EXTRACTION", cur.status === "ok" ? "internal_error" : cur.status, cur.message);
    if (cur.data.fullActivity !== screen.activity) return done("UNEXPECTED_ACTIVITY");
    if (screen.viewHierarchyPath.length === 0) return done("SUCCESS");
    const err = checkActivity(screen.activity);
    if (err) return done("FAILED_ACTIVITY_EXTRACTION", "failed_precondition", err);
    const pkg = screen.activity.slice(0, screen.activity.indexOf("/"));
    const dump = await sctx.sh(`dumpsys activity ${shQuote(pkg)} ${shQuote(pkg)}`, "dumpsys:activity");
    if (dump.status !== "ok") return done("FAILED_ACTIVITY_EXTRACTION", dump.status, dump.message);
    return done(matchViewHierarchy(dump.stdout, screen.viewHierarchyPath));
  }

  installedPackages(opts?: { timeoutMs?: number }): Promise<string[] | StepResult> {
    return this.timed("packages", () => this.installedPackagesQuiet(opts));
  }

  private async installedPackagesQuiet(opts?: { timeoutMs?: number }): Promise<string[] | StepResult> {
    const r = await shellExec(this.ctx, "pm list packages", this.timeout(opts), "pm:list");
    if (r.status !== "ok") return stepResult(r.status, r.message, r.stdout, r.durationMs);
    return parsePmList(r.stdout, "package:");
  }

  screenshot(opts?: { timeoutMs?: number }): Promise<Screenshot | StepResult> {
    return this.timed("screenshot", () => this.screenshotQuiet(opts));
  }

  private async screenshotQuiet(opts?: { timeoutMs?: number }): Promise<Screenshot | StepResult> {
    const ep = this.grpcEndpoint();
    if (ep) {
      const t0 = performance.now();
      const g = await grpcScreenshot(this.serial, ep, this.timeout(opts));
      return "rgba" in g ? g : stepResult(g.status, g.message, "", performance.now() - t0);
    }
    // The frame threads' capture, here on the event loop: a plain socket, the pixels read into one buffer.
    const t0 = performance.now();
    try {
      return await captureFramebuffer(this.ctx.cfg.host, this.ctx.cfg.port, this.serial, this.timeout(opts));
    } catch (e) {
      const status = e instanceof CaptureError ? e.status : "internal_error";
      return stepResult(status, e instanceof Error ? e.message : String(e), "", performance.now() - t0);
    }
  }

  /** Capture (and encode) in a frame thread; without threads, the screenshot here and the encode on libuv's pool. */
  frame(req: FrameRequest): Promise<CapturedFrame | StepResult> {
    return this.timed("frame", () => this.frameQuiet(req));
  }

  private async frameQuiet(req: FrameRequest): Promise<CapturedFrame | StepResult> {
    const t0 = performance.now();
    const timeoutMs = this.timeout(req);
    if (!this.ctx.frameThreads) {
      const shot = await this.screenshotQuiet({ timeoutMs });
      if (!("rgba" in shot)) return shot;
      const encoded = req.encode ? encodeFrame({ width: shot.width, height: shot.height, channels: 4, data: shot.rgba }, req.encode) : undefined;
      encoded?.catch(() => undefined);
      const pixels = !req.raw ? {} : req.rawFormat === "rgb" ? { rgb: rgbaToRgb(shot.rgba, shot.width, shot.height) } : { rgba: shot.rgba };
      return { width: shot.width, height: shot.height, ...pixels, ...(encoded ? { encoded } : {}) };
    }
    const { host, port } = this.ctx.cfg;
    const ep = this.grpcEndpoint();
    const job = this.ctx.frameThreads.capture({
      host, port, serial: this.serial, timeoutMs, raw: req.raw, ...(req.rawFormat ? { rawFormat: req.rawFormat } : {}),
      ...(req.encode ? { spec: req.encode } : {}),
      ...(ep ? { grpc: ep, sharedFrames: this.ctx.grpc?.sharesFrames(ep) ?? false } : {}),
    });
    try {
      const got = await job.captured;
      return job.encoded ? Object.assign(got, { encoded: job.encoded }) : got;
    } catch (e) {
      const status = e instanceof CaptureError ? e.status : "internal_error";
      return stepResult(status, e instanceof Error ? e.message : String(e), "", performance.now() - t0);
    }
  }

  /**
   * Saves or loads the emulator snapshot `name`: gRPC SnapshotService when the device has an endpoint,
   * else the console (`adb emu avd snapshot …`). `via` says which.
   */
  snapshot(op: SnapshotOp, name: string, opts?: { timeoutMs?: number }): Promise<StepResult & { via: "grpc" | "console" }> {
    return deviceSnapshot(this.ctx, this.grpcEndpoint(), op, name, opts?.timeoutMs ?? this.ctx.cfg.defaultTimeoutMs);
  }

  screenshotPng(opts?: { timeoutMs?: number }): Promise<Uint8Array | StepResult> {
    return this.timed("screenshot_png", () => this.screenshotPngQuiet(opts));
  }

  private async screenshotPngQuiet(opts?: { timeoutMs?: number }): Promise<Uint8Array | StepResult> {
    // `exec:` (no terminal): the PNG's bytes arrive as written, never with \n turned into \r\n.
    const r = await guardedCall(this.ctx, "screencap", this.timeout(opts), () => {
      const sock = serviceOutput(this.ctx.cfg.host, this.ctx.cfg.port, this.serial, "exec:screencap -p");
      return { handle: sock, work: () => sock.output };
    });
    if (!r.ok) return stepResult(r.status, r.message, "", r.durationMs);
    if (!isPng(r.value)) return stepResult("internal_error", `screencap -p did not return a PNG (${r.value.byteLength} bytes)`, r.value.subarray(0, 200).toString("latin1"), r.durationMs);
    return new Uint8Array(r.value);
  }

  /** The screen as a tree: the forwarder when it serves this device, else `uiautomator dump` (a11y/read-tree.ts). */
  screenTree(opts?: ScreenTreeRequest): Promise<ScreenTree | ScreenTreeFailure> {
    return this.timed("screen_tree", () => readScreenTree(this.ctx, this.a11y, opts));
  }

  orientation(opts?: { timeoutMs?: number }): Promise<0 | 1 | 2 | 3 | StepResult> {
    return this.timed("orientation", () => this.orientationQuiet(opts));
  }

  private async orientationQuiet(opts?: { timeoutMs?: number }): Promise<0 | 1 | 2 | 3 | StepResult> {
    const sctx = createStepCtx(this.ctx, this.timeout(opts), []);
    const r = await stepHandlers.get_orientation({ command: "get_orientation" }, sctx);
    if (r.status === "ok" && r.data?.kind === "orientation") return r.data.orientation;
    return r;
  }

  screenSize(opts?: { timeoutMs?: number }): Promise<{ width: number; height: number } | StepResult> {
    return this.timed("screen_size", () => this.screenSizeQuiet(opts));
  }

  private async screenSizeQuiet(opts?: { timeoutMs?: number }): Promise<{ width: number; height: number } | StepResult> {
    const r = await shellExec(this.ctx, "wm size", this.timeout(opts), "wm:size");
    if (r.status === "ok") {
      const s = parseWmSize(r.stdout);
      if (s) return s;
    } else if (r.status !== "internal_error") return stepResult(r.status, r.message, r.stdout, r.durationMs);
    // Fall back to the framebuffer header (AndroidEnv takes the size from the first screenshot).
    const shot = await this.screenshotQuiet(opts);
    if ("rgba" in shot) return { width: shot.width, height: shot.height };
    return shot;
  }
}
