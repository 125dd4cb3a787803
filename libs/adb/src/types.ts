/**
 * The device interface the rest of the farm sees. Implemented today over an adb server with adbkit;
 * later also over the emulator's gRPC. Device trouble is returned as data (a status), never thrown
 * across this boundary, except where noted.
 */
import type { FrameSpec } from "@farm/frames";
import type { AdbRequest, AppScreen } from "@farm/task";
import type { ScreenTree, ScreenTreeFailure, ScreenTreeSourceName } from "./a11y/types.ts";

export type StepStatus =
  | "ok"
  | "adb_error" // the adb server or transport failed (device gone, connection reset)
  | "timeout" // no answer within the deadline (hung device)
  | "failed_precondition" // the request itself is invalid (empty activity, negative coordinate, …)
  | "internal_error" // the device answered with an error (e.g. `Error` in `am start` output)
  | "unknown_command"; // the request kind is not supported by this driver

export interface StepResult {
  status: StepStatus;
  /** Empty when ok; otherwise says what failed and, where possible, what to do. */
  message: string;
  /** Raw command output (stdout, and stderr where the command merges it). */
  output: string;
  /** Parsed payload for requests that return data. */
  data?:
    | { kind: "current_activity"; fullActivity: string }
    | { kind: "orientation"; orientation: 0 | 1 | 2 | 3 }
    | { kind: "pull"; content: Uint8Array }
    | { kind: "list"; items: string[] }
    | { kind: "start_activity"; fullActivity: string };
  durationMs: number;
}

export interface ShellResult {
  status: StepStatus;
  message: string;
  stdout: string;
  durationMs: number;
}

/** One logcat line parsed from `-v epoch` text (task-format.md §6.2). */
export interface LogcatRecord {
  timestampSec: number;
  pid: number;
  tid: number;
  priority: string;
  tag: string;
  message: string;
}

export interface LogcatOptions {
  /** Filter specs, e.g. `AndroidRLTask:V`; `*:S` is appended. */
  filters: string[];
  /** Run `logcat -b all -c` first. */
  clear: boolean;
}

/** A long-lived text logcat stream. Survives a device reconnect (re-opening itself) or reports that it could not. */
export interface LogcatStream {
  /** Called for every parsed line, in order. */
  onRecord(listener: (rec: LogcatRecord) => void): void;
  /** Lines that did not match the `-v epoch` shape are counted, never fatal. */
  readonly malformedLines: number;
  /** "open" | "reconnecting" | "failed" | "closed". */
  readonly state: "open" | "reconnecting" | "failed" | "closed";
  /** Fires when the stream has failed for good (device gone past its reconnect budget). */
  onFailed(listener: (reason: string) => void): void;
  /** Clears the device's log buffers (`logcat -b all -c`) while the stream keeps running; false if that failed. */
  clear?(): Promise<boolean>;
  close(): Promise<void>;
}

/** Touch and key input at high step rates, without a new adb stream per action. Pixel coordinates. */
export interface ActionChannel {
  touchDown(x: number, y: number): Promise<StepResult>;
  touchMove(x: number, y: number): Promise<StepResult>;
  touchUp(x: number, y: number): Promise<StepResult>;
  tap(x: number, y: number): Promise<StepResult>;
  swipe(x1: number, y1: number, x2: number, y2: number, durationMs: number): Promise<StepResult>;
  keyEvent(keycode: string): Promise<StepResult>;
  /**
   * Several keys as one command (`input keyevent K1 K2 …` on the shell channel, one write of key events on gRPC),
   * at most MAX_KEYS_PER_COMMAND (else `failed_precondition`, nothing sent): e.g. END and the DELs that clear a field.
   */
  keyEvents(keycodes: readonly string[]): Promise<StepResult>;
  /**
   * Types `text` into the focused field, the same text on every channel: `%s` is a space, as Android's `input text`
   * makes it (quote.ts androidInputText), in pieces of at most 1 KB (`input text` lines on the shell channel,
   * KeyboardEvents with `text` on gRPC). Printable characters only, at most INPUT_TEXT_MAX_CHARS (else
   * `failed_precondition`, nothing sent).
   */
  text(text: string): Promise<StepResult>;
  close(): Promise<void>;
}

export type AppScreenMatch =
  | "SUCCESS"
  | "EMPTY_EXPECTED_ACTIVITY"
  | "FAILED_ACTIVITY_EXTRACTION"
  | "UNEXPECTED_ACTIVITY"
  | "UNEXPECTED_VIEW_HIERARCHY";

export interface Screenshot {
  width: number;
  height: number;
  /** RGBA, row-major. */
  rgba: Uint8Array;
}

/** What a frame is taken for: the policy (raw pixels) and/or the trajectory (an encoding). */
export interface FrameRequest {
  /** Hand back the pixels (a policy that looks at the screen). */
  raw: boolean;
  /** The layout of the pixels handed back: `rgba` (default) or `rgb` (taken as RGB888 from an emulator's gRPC, no conversion here). */
  rawFormat?: "rgba" | "rgb";
  /** Encode the frame this way (the trajectory); the encode never runs on the event loop. */
  encode?: FrameSpec;
  timeoutMs?: number;
}

/** A frame taken at one moment; the encoding may still be under way. */
export interface CapturedFrame {
  width: number;
  height: number;
  /** RGBA, row-major; present when asked for (`raw`, rawFormat `rgba`). */
  rgba?: Uint8Array;
  /** RGB, row-major; present when asked for (`raw`, rawFormat `rgb`). */
  rgb?: Uint8Array;
  /** The encoded frame, when asked for; rejects with an Error saying why the encoding failed. */
  encoded?: Promise<Uint8Array>;
}

export type DeviceState = "device" | "offline" | "unauthorized" | "gone" | string;

/** The device's accessibility events as they happen (`uiautomator events`; a11y/events-stream.ts). */
export interface A11yEventStream {
  /** Called with each event's type (`TYPE_WINDOW_CONTENT_CHANGED`, …) as its line arrives. */
  onEvent(listener: (type: string) => void): void;
  /** Why the stream stopped, once it did (closed by the device, an adb error); undefined while it runs or after close(). */
  readonly failed: string | undefined;
  /** Lines that carried no event type (the tool's own messages). */
  readonly otherLines: number;
  close(): void;
}

export interface Device {
  readonly serial: string;
  /** Runs one task step command (§8.2 of task-format.md), with the request's timeout or the driver default. */
  execute(request: AdbRequest, opts?: { timeoutMs?: number; apkDirs?: string[] }): Promise<StepResult>;
  /** Runs a device shell command line as given (caller is responsible for quoting; see `quote`). */
  shell(commandLine: string, opts?: { timeoutMs?: number }): Promise<ShellResult>;
  waitBootComplete(timeoutMs: number): Promise<StepResult>;
  openActionChannel(): Promise<ActionChannel>;
  openLogcat(opts: LogcatOptions): Promise<LogcatStream>;
  matchAppScreen(screen: AppScreen, opts?: { timeoutMs?: number }): Promise<AppScreenMatch>;
  installedPackages(opts?: { timeoutMs?: number }): Promise<string[] | StepResult>;
  screenshot(opts?: { timeoutMs?: number }): Promise<Screenshot | StepResult>;
  screenshotPng(opts?: { timeoutMs?: number }): Promise<Uint8Array | StepResult>;
  /**
   * The screen now, captured and encoded off the event loop: resolves once the pixels are taken (the step
   * may go on), with the encoding as a promise. Optional: without it callers use `screenshot()`.
   */
  frame?(req: FrameRequest): Promise<CapturedFrame | StepResult>;
  /** Saves or loads an emulator snapshot by name (gRPC SnapshotService, else the console). Optional: emulators only. */
  snapshot?(op: "save" | "load", name: string, opts?: { timeoutMs?: number }): Promise<StepResult & { via: "grpc" | "console" }>;
  orientation(opts?: { timeoutMs?: number }): Promise<0 | 1 | 2 | 3 | StepResult>;
  screenSize(opts?: { timeoutMs?: number }): Promise<{ width: number; height: number } | StepResult>;
  /**
   * The device's state on the adb server now (`device`, `offline`, `unauthorized`, …; `gone` when the
   * server does not list it). Optional so test doubles need not implement it.
   */
  state?(opts?: { timeoutMs?: number }): Promise<DeviceState | StepResult>;
  /** Liveness round trip (a hung device still lists as `device`): ok, or timeout / adb_error. Optional like `state`. */
  probe?(opts?: { timeoutMs?: number }): Promise<StepResult>;
  /**
   * The screen now as one tree (windows → nodes, AndroidEnv's forest field names): from the accessibility
   * forwarder when it serves the device, else `uiautomator dump`; bounded, deadline-bound, trouble as data.
   */
  screenTree?(opts?: { timeoutMs?: number; source?: "auto" | ScreenTreeSourceName }): Promise<ScreenTree | ScreenTreeFailure>;
  /**
   * The device's accessibility events as they happen (`uiautomator events` over adb shell), for settling after an
   * action (issue 36); the stream, or why it could not start. Optional: test doubles need not offer it.
   */
  openAccessibilityEvents?(opts?: { timeoutMs?: number }): Promise<A11yEventStream | StepResult>;
}

export interface DeviceEvent {
  serial: string;
  state: DeviceState;
}
