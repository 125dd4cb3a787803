/**
 * The host's `android_env.A11yService`, as AndroidEnv's A11yGrpcWrapper serves it, for all of a process's
 * devices: one gRPC server per host process, one port on it per device (the device is told its port by the
 * SET_GRPC broadcast, and the port it dialled — the call's authority — says which device a stream claims to be).
 * The device's forwarder opens `Bidi`; a read writes `get_forest` on it and takes the next forest.
 * Forests over `maxBytes` are not decoded; decoded ones are checked by forest.ts.
 *
 * Who a stream is. The authority is the client's word, and every emulator (and every local process) reaches
 * every port, so a port proves nothing. Each device gets a secret with its SET_GRPC broadcast (`--es token
 * <32 hex>`, an extra the real app's receiver does not read: host and port work as before); a forwarder that
 * sends it back (`farm-a11y-token` metadata: the simulated one) proves the device. A stream with a wrong token
 * is refused; once a device has proved itself, a stream without the token is refused too; a stream without
 * one (a forwarder that cannot send it) is taken only while the device has no live stream, and never
 * replaces one. Refusals are counted (`refusals`, `onRefused`: the worker's metric).
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { a11yGrpc, grpc, type ClientToServerMsg, type ServerToClientMsg } from "@farm/a11y-grpc";
import { silentLogger, type Logger } from "@farm/log";
import { shQuote } from "@farm/shell-words";
import { orTimeout } from "@farm/time";
import type { Device, StepResult } from "../types.ts";
import { forestToTree } from "./forest.ts";
import type { ScreenTree, ScreenTreeFailure, TreeLimits } from "./types.ts";
import { DEFAULT_TREE_LIMITS } from "./types.ts";
import { XmlRefused } from "./xml.ts";

export const FORWARDER_PACKAGE = "com.google.androidenv.accessibilityforwarder";
export const FORWARDER_SERVICE = `${FORWARDER_PACKAGE}/${FORWARDER_PACKAGE}.AccessibilityForwarder`;
export const FORWARDER_RECEIVER = `${FORWARDER_PACKAGE}/${FORWARDER_PACKAGE}.FlagsBroadcastReceiver`;
const ACTION_PREFIX = "accessibility_forwarder.intent.action.";
/** The call metadata a forwarder proves its device with (the SET_GRPC `token` extra, sent back). */
export const FORWARDER_TOKEN_METADATA = "farm-a11y-token";

/** Why a stream was refused (a metric label: bounded). */
export type ForwarderRefusal = "unknown_port" | "bad_token" | "token_missing" | "duplicate";

/** Where trees come from other than `uiautomator dump`: the driver asks it first. */
export interface ForestSource {
  /** True when this device's forwarder is enabled and connected now. */
  serves(serial: string): boolean;
  read(serial: string, timeoutMs: number, limits: TreeLimits): Promise<Omit<ScreenTree, "durationMs"> | ScreenTreeFailure>;
}

export interface ForwarderHubOptions {
  /** Address the server listens on. Default 127.0.0.1 (an emulator reaches it as 10.0.2.2). */
  bindHost?: string;
  /** What the device is told to dial (SET_GRPC `host`). Default 10.0.2.2, the emulator's alias of the host's loopback. */
  deviceHost?: string;
  /** Bytes of one forest; larger ones are not decoded. Default DEFAULT_TREE_LIMITS.maxBytes. */
  maxBytes?: number;
  logger?: Logger;
}

type Incoming = ClientToServerMsg & { tooLarge?: number; size?: number };
type Stream = grpc.ServerDuplexStream<Incoming, ServerToClientMsg>;
interface Waiter {
  settle(r: Omit<ScreenTree, "durationMs"> | ScreenTreeFailure): void;
  limits: TreeLimits;
}

export class A11yForwarderHub implements ForestSource {
  private readonly server: grpc.Server;
  private readonly portOf = new Map<string, number>();
  private readonly serialOf = new Map<number, string>();
  private readonly streams = new Map<string, Stream>();
  private readonly waiters = new Map<string, Waiter[]>();
  private readonly logger: Logger;
  private readonly maxBytes: number;
  private closed = false;
  /** The secret each device was given with SET_GRPC. */
  private readonly tokens = new Map<string, Buffer>();
  /** Devices whose forwarder has sent its token: from then on a stream without it is refused. */
  private readonly proven = new Set<string>();
  private readonly refused = new Map<ForwarderRefusal, number>();
  /** Events the forwarders sent (view clicked, text changed, …), counted; a consumer may listen. */
  onEvent?: (serial: string, event: Record<string, string>) => void;
  /** Each refused stream (a metric, one log line); `serial` undefined for a port of no device. */
  onRefused?: (reason: ForwarderRefusal, serial: string | undefined) => void;

  /** Streams refused so far, by reason. */
  get refusals(): Readonly<Record<ForwarderRefusal, number>> {
    return { unknown_port: 0, bad_token: 0, token_missing: 0, duplicate: 0, ...Object.fromEntries(this.refused) };
  }

  constructor(private readonly opts: ForwarderHubOptions = {}) {
    this.logger = opts.logger ?? silentLogger;
    this.maxBytes = opts.maxBytes ?? DEFAULT_TREE_LIMITS.maxBytes;
    // gRPC's own cap is the hard memory bound (the stream dies past it); below it, a forest over maxBytes is
    // refused with a clear message and never decoded.
    this.server = new grpc.Server({ "grpc.max_receive_message_length": 4 * this.maxBytes });
    const { service } = a11yGrpc();
    const bidi = service["Bidi"]!;
    const definition: grpc.ServiceDefinition = {
      ...service,
      Bidi: {
        ...bidi,
        requestDeserialize: (buf: Buffer): Incoming => (buf.length > this.maxBytes ? { tooLarge: buf.length } : Object.assign(bidi.requestDeserialize(buf) as ClientToServerMsg, { size: buf.length })),
      },
      // Reads ask on Bidi; forests pushed by tree logging are acknowledged, not decoded.
      SendForest: { ...service["SendForest"]!, requestDeserialize: () => ({}) },
    };
    this.server.addService(definition, {
      Bidi: (call: Stream) => this.onStream(call),
      SendForest: (_call: unknown, cb: grpc.sendUnaryData<{ error: string }>) => cb(null, { error: "" }),
      SendEvent: (_call: unknown, cb: grpc.sendUnaryData<{ error: string }>) => cb(null, { error: "" }),
    });
  }

  /** The port this device's forwarder dials; bound on the one server on first use. */
  async portFor(serial: string): Promise<number> {
    const known = this.portOf.get(serial);
    if (known !== undefined) return known;
    if (this.closed) throw new Error("the accessibility hub is closed");
    const port = await new Promise<number>((resolve, reject) =>
      this.server.bindAsync(`${this.opts.bindHost ?? "127.0.0.1"}:0`, grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
    );
    this.portOf.set(serial, port);
    this.serialOf.set(port, serial);
    this.tokens.set(serial, randomBytes(16));
    return port;
  }

  /**
   * Turns the forwarder on as AndroidEnv's wrapper does: the accessibility service setting, optionally tree
   * logs (the wrapper's `enable_a11y_tree_info`: the device then pushes a forest every 100 ms, which reads on
   * `Bidi` do not need and the host would pay for), and SET_GRPC with this device's port (extras after the
   * action, as the wrapper sends them).
   */
  async enable(device: Pick<Device, "serial" | "shell">, opts: { timeoutMs?: number; treeLogs?: boolean } = {}): Promise<StepResult> {
    const t0 = performance.now();
    const timeoutMs = opts.timeoutMs ?? 10_000;
    const port = await this.portFor(device.serial);
    const host = this.opts.deviceHost ?? "10.0.2.2";
    const lines = [
      `settings put secure enabled_accessibility_services ${shQuote(FORWARDER_SERVICE)}`,
      ...(opts.treeLogs ? [`am broadcast -n ${shQuote(FORWARDER_RECEIVER)} -a ${ACTION_PREFIX}ENABLE_ACCESSIBILITY_TREE_LOGS`] : []),
      `settings put global no_proxy ${shQuote(`${host}:${port}`)}`,
      `am broadcast -n ${shQuote(FORWARDER_RECEIVER)} -a ${ACTION_PREFIX}SET_GRPC --ei port ${port} --es host ${shQuote(host)} --es token ${this.tokens.get(device.serial)!.toString("hex")}`,
    ];
    for (const line of lines) {
      const r = await device.shell(line, { timeoutMs });
      if (r.status !== "ok") return { status: r.status, message: `enabling the accessibility forwarder: ${r.message}`, output: r.stdout, durationMs: performance.now() - t0 };
    }
    return { status: "ok", message: "", output: "", durationMs: performance.now() - t0 };
  }

  serves(serial: string): boolean {
    return this.streams.has(serial);
  }

  /** Asks the device's forwarder for a forest: `get_forest` on its Bidi stream, the next forest back. */
  read(serial: string, timeoutMs: number, limits: TreeLimits): Promise<Omit<ScreenTree, "durationMs"> | ScreenTreeFailure> {
    const stream = this.streams.get(serial);
    if (!stream) return Promise.resolve(failure("adb_error", "adb_error", `no accessibility forwarder of '${serial}' is connected to this host's A11yService`));
    const list = this.waiters.get(serial) ?? [];
    this.waiters.set(serial, list);
    let w!: Waiter;
    const answer = new Promise<Omit<ScreenTree, "durationMs"> | ScreenTreeFailure>((resolve) => {
      w = {
        limits,
        settle: (r) => {
          const at = list.indexOf(w);
          if (at >= 0) list.splice(at, 1);
          resolve(r);
        },
      };
    });
    list.push(w);
    try {
      stream.write({ get_forest: {} });
    } catch (e) {
      w.settle(failure("adb_error", "adb_error", `asking the forwarder of '${serial}' for a forest failed: ${e instanceof Error ? e.message : String(e)}`));
    }
    return orTimeout(answer, timeoutMs, () => {
      const late = failure("timeout", "timeout", `the forwarder of '${serial}' sent no forest within ${timeoutMs} ms`);
      w.settle(late);
      return late;
    });
  }

  /** Whether the stream is taken, and if not why (module comment: who a stream is). */
  private admit(serial: string, call: Stream): ForwarderRefusal | "proven" | "unproven" {
    const sent = call.metadata.get(FORWARDER_TOKEN_METADATA)[0];
    if (sent !== undefined) {
      const want = this.tokens.get(serial)!;
      const got = Buffer.from(typeof sent === "string" && /^[0-9a-f]{32}$/.test(sent) ? sent : "", "hex");
      return got.length === want.length && timingSafeEqual(got, want) ? "proven" : "bad_token";
    }
    if (this.proven.has(serial)) return "token_missing";
    return this.streams.has(serial) ? "duplicate" : "unproven";
  }

  private refuse(call: Stream, reason: ForwarderRefusal, serial: string | undefined, port: number): void {
    this.refused.set(reason, (this.refused.get(reason) ?? 0) + 1);
    this.onRefused?.(reason, serial);
    this.logger.warn({ event: "a11y:forwarder-refused", reason, ...(serial ? { serial } : {}), port, peer: call.getPeer().slice(0, 64) }, "accessibility forwarder stream refused");
    call.emit("error", { code: grpc.status.PERMISSION_DENIED, details: reason === "unknown_port" ? `port ${port} belongs to no device of this host` : `not this device's forwarder (${reason})` });
  }

  private onStream(call: Stream): void {
    const port = Number(/:(\d+)$/.exec(call.getHost())?.[1]);
    const serial = this.serialOf.get(port);
    if (serial === undefined) return this.refuse(call, "unknown_port", undefined, port);
    const admitted = this.admit(serial, call);
    if (admitted !== "proven" && admitted !== "unproven") return this.refuse(call, admitted, serial, port);
    if (admitted === "proven") this.proven.add(serial);
    this.streams.get(serial)?.end(); // only a proven stream replaces a live one (the device reconnected)
    this.streams.set(serial, call);
    this.logger.info({ event: "a11y:forwarder-connected", serial, port, proven: admitted === "proven" }, "accessibility forwarder connected");
    call.on("data", (m: Incoming) => this.onMessage(serial, m));
    const gone = (): void => {
      if (this.streams.get(serial) !== call) return;
      this.streams.delete(serial);
      for (const w of [...(this.waiters.get(serial) ?? [])]) w.settle(failure("adb_error", "adb_error", `the forwarder of '${serial}' disconnected`));
    };
    call.on("end", gone);
    call.on("error", gone);
    call.on("close", gone);
  }

  private onMessage(serial: string, m: Incoming): void {
    if (m.payload === "event" && m.event) {
      this.onEvent?.(serial, m.event.event ?? {});
      return;
    }
    const waiting = [...(this.waiters.get(serial) ?? [])];
    if (m.tooLarge !== undefined) {
      for (const w of waiting) w.settle(failure("refused", "internal_error", `forest of '${serial}' is ${m.tooLarge} bytes, over the ${this.maxBytes}-byte bound; not decoded`));
      return;
    }
    if (m.payload !== "forest" || !m.forest) return;
    for (const w of waiting) {
      try {
        w.settle(forestToTree(m.forest, m.size ?? 0, w.limits));
      } catch (e) {
        w.settle(failure("refused", "internal_error", `forest of '${serial}' refused: ${e instanceof XmlRefused ? e.message : String(e)}`));
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const [serial, list] of this.waiters) for (const w of [...list]) w.settle(failure("adb_error", "adb_error", `the accessibility hub closed while '${serial}' was read`));
    for (const s of this.streams.values()) s.end();
    this.streams.clear();
    // Forwarders never end their stream themselves: stop at once rather than wait for them.
    this.server.forceShutdown();
  }
}

function failure(outcome: ScreenTreeFailure["outcome"], status: ScreenTreeFailure["status"], message: string): ScreenTreeFailure {
  return { status, message, output: "", durationMs: 0, outcome, source: "forwarder" };
}
