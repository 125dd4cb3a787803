/**
 * AndroidEnv's accessibility forwarder app (`com.google.androidenv.accessibilityforwarder`), as the
 * host sees it: an accessibility service enabled through `enabled_accessibility_services`, a
 * FlagsBroadcastReceiver taking SET_GRPC (`--ei port`, `--es host`) and ENABLE/DISABLE of tree logs,
 * and while enabled with a port, as the real app does whatever the host serves: a forest every
 * a11yTreePeriodMs (100 ms) while tree logs are on (`SendForest`) and each accessibility event
 * (`SendEvent`), unary calls with the app's 1 s deadline. Besides, a `Bidi` stream answering `get_forest`
 * (what the farm's hub reads with); a host whose `Bidi` fails (AndroidEnv's servicer) still gets the pushes.
 * SET_GRPC may also carry `--es token <secret>` (the real app ignores extras it does not read): the
 * forwarder then sends it as `farm-a11y-token` metadata on every call, so the farm's hub knows the stream
 * is this device's. Its flags live in the app's process memory: a snapshot keeps them (saveState), a fresh
 * device starts without them.
 */
import type { Logger } from "@farm/log";
import { sleep } from "@farm/time";
import type { Accessibility, A11yEvent } from "../system/accessibility.ts";
import { parseComponent, type ComponentName } from "../system/components.ts";
import type { LogBuffer, LogPriority } from "../system/log-buffer.ts";
import type { SettingsStore } from "../system/settings-store.ts";
import { eventMap, forestOf } from "./forest.ts";
import { ForwarderLink } from "./link.ts";

export const FORWARDER_PACKAGE = "com.google.androidenv.accessibilityforwarder";
export const FORWARDER_SERVICE = `${FORWARDER_PACKAGE}.AccessibilityForwarder`;
export const FORWARDER_RECEIVER = `${FORWARDER_PACKAGE}.FlagsBroadcastReceiver`;
const ACTION_PREFIX = "accessibility_forwarder.intent.action.";
export const ACTION_SET_GRPC = `${ACTION_PREFIX}SET_GRPC`;
export const ACTION_ENABLE_TREE_LOGS = `${ACTION_PREFIX}ENABLE_ACCESSIBILITY_TREE_LOGS`;
export const ACTION_DISABLE_TREE_LOGS = `${ACTION_PREFIX}DISABLE_ACCESSIBILITY_TREE_LOGS`;
/** The app's tree-logging period (LogFlags.a11yTreePeriodMs, 100 ms by default). */
export const TREE_PERIOD_MS = 100;
/** The most characters of a SET_GRPC token kept (the hub's are 32 hex digits). */
const MAX_TOKEN_CHARS = 256;
/** The emulator's alias for the host's loopback. */
const HOST_ALIAS = "10.0.2.2";
/** Addresses that are the device itself: nothing of the host's listens there. */
const DEVICE_SELF = new Set(["localhost", "127.0.0.1", "::1", "10.0.2.15", "0.0.0.0"]);
/** The app's pid in log lines (a system app started at boot). */
const FORWARDER_PID = 1184;

/** The app's flags (LogFlags), the state a broadcast changes. */
export interface ForwarderFlags {
  host: string;
  port: number;
  logTree: boolean;
  /** SET_GRPC's `token` extra (the farm's; not a flag of the real app), sent back as call metadata. */
  token?: string;
}

/** A broadcast as the receiver gets it. */
export interface BroadcastIntent {
  action?: string;
  component?: ComponentName;
  extras: ReadonlyMap<string, unknown>;
}

export class AccessibilityForwarder {
  private flags: ForwarderFlags = { host: "", port: 0, logTree: false };
  private link: ForwarderLink | undefined;
  private linkAddress = "";
  private unsubscribe: (() => void) | undefined;
  private treeLoop: AbortController | undefined;

  constructor(
    private readonly a11y: Accessibility,
    private readonly settings: SettingsStore,
    private readonly log: LogBuffer,
    private readonly logger: Logger,
  ) {}

  /** Whether `enabled_accessibility_services` lists the service (full or short class name). */
  get enabled(): boolean {
    const list = this.settings.get("secure", "enabled_accessibility_services") ?? "";
    return list.split(":").some((c) => {
      const cmp = parseComponent(c.trim());
      return cmp?.packageName === FORWARDER_PACKAGE && cmp.className === FORWARDER_SERVICE;
    });
  }

  /** Whether the stream to the host is open (for tests and dumpsys-like reports). */
  get connected(): boolean {
    return this.link?.up ?? false;
  }

  get currentFlags(): ForwarderFlags {
    return { ...this.flags };
  }

  /** FlagsBroadcastReceiver.onReceive. True when the intent was for it. */
  receive(intent: BroadcastIntent): boolean {
    if (intent.component && (intent.component.packageName !== FORWARDER_PACKAGE || intent.component.className !== FORWARDER_RECEIVER)) return false;
    this.logcat("I", "FlagsBroadcastReceiver", `Received broadcast intent with action: ${intent.action ?? "null"}`);
    switch (intent.action) {
      case ACTION_ENABLE_TREE_LOGS:
      case ACTION_DISABLE_TREE_LOGS: {
        const on = intent.action === ACTION_ENABLE_TREE_LOGS;
        this.logcat("I", "FlagsBroadcastReceiver", `${on ? "Enabling" : "Disabling"} Accessibility Tree logging.`);
        this.flags = { ...this.flags, logTree: on };
        break;
      }
      case ACTION_SET_GRPC: {
        // As Intent.getStringExtra / getIntExtra: an extra of another type reads as absent.
        const host = intent.extras.get("host");
        const port = intent.extras.get("port");
        const token = intent.extras.get("token");
        this.flags = {
          logTree: this.flags.logTree,
          host: typeof host === "string" ? host : HOST_ALIAS,
          port: typeof port === "number" && Number.isInteger(port) ? port : 0,
          ...(typeof token === "string" && token.length > 0 && token.length <= MAX_TOKEN_CHARS ? { token } : {}),
        };
        this.logcat("I", "FlagsBroadcastReceiver", `Setting gRPC endpoint to ${this.flags.host}:${this.flags.port}.`);
        break;
      }
      default:
        this.logcat("W", "FlagsBroadcastReceiver", `Unknown action: ${intent.action ?? "null"}`);
    }
    this.apply();
    return true;
  }

  /** Brings connections, event forwarding and tree logs in line with the flags and the setting. */
  apply(): void {
    const active = this.enabled && this.flags.port > 0;
    const address = `${this.flags.host}:${this.flags.port}#${this.flags.token ?? ""}`;
    if (this.link && (!active || address !== this.linkAddress)) this.stopLink();
    if (active && !this.link) this.startLink(address);
    if (active && !this.unsubscribe) this.unsubscribe = this.a11y.onEvent((e) => this.forwardEvent(e));
    if (!active && this.unsubscribe) {
      this.unsubscribe();
      this.unsubscribe = undefined;
    }
    const logging = active && this.flags.logTree;
    if (logging && !this.treeLoop) this.startTreeLoop();
    if (!logging && this.treeLoop) {
      this.treeLoop.abort();
      this.treeLoop = undefined;
    }
  }

  saveState(): ForwarderFlags {
    return { ...this.flags };
  }

  restoreState(flags: ForwarderFlags | undefined): void {
    this.flags = flags
      ? { host: String(flags.host), port: Number(flags.port) || 0, logTree: !!flags.logTree, ...(typeof flags.token === "string" ? { token: flags.token } : {}) }
      : { host: "", port: 0, logTree: false };
    this.apply();
  }

  close(): void {
    this.flags = { host: "", port: 0, logTree: false };
    this.apply();
  }

  private startLink(address: string): void {
    this.linkAddress = address;
    this.logcat("I", "AndroidRLTask", `Building channel on ${this.flags.host}:${this.flags.port}.`);
    const token = this.flags.token;
    this.link = new ForwarderLink({
      target: () => this.target(),
      ...(token ? { token } : {}),
      forest: () => forestOf(this.a11y.snapshot()),
      onUp: (attempts) => this.logger.info({ event: "a11y_forwarder_connected", address: `${this.flags.host}:${this.flags.port}`, failed_attempts: attempts }, "accessibility forwarder connected to the host's A11yService"),
      onDown: (error) => {
        this.logger.warn({ event: "a11y_forwarder_unreachable", address: `${this.flags.host}:${this.flags.port}`, error }, "accessibility forwarder cannot reach the host's A11yService; retrying with backoff");
        this.logcat("W", "AndroidRLTask", "gRPC StatusException; are you sure networking is turned on?");
      },
    });
  }

  private stopLink(): void {
    this.link?.close();
    this.link = undefined;
    this.linkAddress = "";
  }

  /** Where `host` leads from inside the emulator: 10.0.2.2 is the host's loopback, the device's own addresses lead nowhere. */
  private target(): { address: string } | { error: string } {
    const { host, port } = this.flags;
    if (this.settings.get("global", "airplane_mode_on") === "1") return { error: "airplane mode is on" };
    if (host === HOST_ALIAS) return { address: `127.0.0.1:${port}` };
    if (DEVICE_SELF.has(host.toLowerCase())) return { error: `${host} is the device itself; the host is ${HOST_ALIAS}` };
    if (host.length > 253 || !/^[A-Za-z0-9.-]+$|^[0-9A-Fa-f:]+$/.test(host) || port > 65535) return { error: `not a host:port the forwarder can dial: ${JSON.stringify(host)}:${port}` };
    return { address: host.includes(":") ? `[${host}]:${port}` : `${host}:${port}` };
  }

  /** As the app: every event with something to say goes out by `SendEvent` (a failed call is lost, as on a device). */
  private forwardEvent(e: A11yEvent): void {
    if (!this.link) return;
    const map = eventMap(e, this.a11y.snapshot());
    if (map) this.link.sendEvent(map);
  }

  private startTreeLoop(): void {
    const loop = new AbortController();
    this.treeLoop = loop;
    void (async () => {
      // As the app's thread: a forest every period whether or not any stream is up.
      while (!loop.signal.aborted) {
        this.link?.sendForest(forestOf(this.a11y.snapshot()));
        await sleep(TREE_PERIOD_MS, loop.signal);
      }
    })();
  }

  private logcat(priority: LogPriority, tag: string, message: string): void {
    this.log.append({ pid: FORWARDER_PID, tid: FORWARDER_PID, priority, tag, message });
  }
}
