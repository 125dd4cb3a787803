/**
 * The worker's side of human demonstrations (`--policy human`): for each episode run by an operator it lists the
 * episode as waiting (Redis, `@farm/queue` operator-relay.ts), publishes the device's screen as JPEG frames when
 * it changes and each step's view (goal, elements, step, limits), and hands the `human` policy the lease holder's
 * next action from the `act` channel. The scheduler relays both ways to the operator's browser, so devices may sit
 * on any host. One subscriber connection per worker host (created on the first human episode).
 *
 * When the operator is gone the episode ends `operator_abandoned` (the policy's error): the lease lapsed (the page
 * stayed closed past the grace period), the operator left (release), a step idled past the idle limit, or no
 * operator took the episode within the wait limit. One log line and `farm_operator_abandons_total{reason}` each.
 */
import { encodeFrame } from "@farm/frames";
import { coerceError } from "@farm/errors";
import type { Logger } from "@farm/log";
import type { FarmMetrics } from "@farm/metrics";
import { PolicyError, type OperatorAnswer, type OperatorChannel, type OperatorView } from "@farm/policy";
import { createRedisClient, operatorKeys, OPERATOR_NAME_PATTERN, OPERATOR_STATE_TTL_MS, type OperatorEvent, type RedisClient, type WaitingEpisode } from "@farm/queue";
import { terminalSafe } from "@farm/terminal-text";
import { sleep } from "@farm/time";
import type { DeviceSource } from "./device-source.ts";

export interface OperatorRelaySettings {
  /** The fastest the screen is looked at for changes (ms between screenshots). */
  frameIntervalMs: number;
  /** Frames are scaled to fit this many pixels on their longer side. */
  frameMaxSide: number;
  jpegQuality: number;
  /** Defaults when the campaign sets none. */
  graceMs: number;
  idleMs: number;
  waitMs: number;
}

export const DEFAULT_OPERATOR_RELAY: OperatorRelaySettings = { frameIntervalMs: 33, frameMaxSide: 720, jpegQuality: 70, graceMs: 30_000, idleMs: 300_000, waitMs: 3_600_000 };

/** The episode an operator channel serves. */
export interface OperatorEpisode {
  episodeId: string;
  campaignId: string;
  episodeIndex: number;
  taskId: string;
  goal: string;
  serial: string;
  graceMs?: number;
  idleMs?: number;
  waitMs?: number;
  maxSteps?: number;
  maxSec?: number;
}

const TICK_MS = 100;
/** How often an episode nobody drives yet is looked at. */
const IDLE_FRAME_MS = 500;

export class OperatorRelay {
  private sub: RedisClient | undefined;
  private readonly listeners = new Map<string, (message: string) => void>();
  readonly settings: OperatorRelaySettings;

  constructor(
    private readonly redis: RedisClient,
    private readonly redisUrl: string,
    readonly prefix: string,
    private readonly driver: DeviceSource,
    private readonly workerName: string,
    private readonly metrics: FarmMetrics,
    private readonly logger: Logger,
    settings: Partial<OperatorRelaySettings> = {},
  ) {
    this.settings = { ...DEFAULT_OPERATOR_RELAY, ...settings };
  }

  /** The longest one step may wait: for an operator to come, then the grace and idle limits (the policy deadline's default). */
  deadlineFor(e: OperatorEpisode): number {
    const s = this.settings;
    return (e.waitMs ?? s.waitMs) + (e.idleMs ?? s.idleMs) + (e.graceMs ?? s.graceMs) + 10_000;
  }

  channel(e: OperatorEpisode): OperatorChannel {
    return new RedisOperatorChannel(this, e);
  }

  /** @internal */ get client(): RedisClient {
    return this.redis;
  }
  /** @internal */ get worker(): string {
    return this.workerName;
  }
  /** @internal */ get log(): Logger {
    return this.logger;
  }
  /** @internal */ get farmMetrics(): FarmMetrics {
    return this.metrics;
  }
  /** @internal */ get devices(): DeviceSource {
    return this.driver;
  }

  /** @internal */ async listen(channel: string, onMessage: (message: string) => void): Promise<void> {
    if (!this.sub) {
      this.sub = createRedisClient(this.redisUrl, "blocking");
      this.sub.on("message", (ch: string, message: string) => this.listeners.get(ch)?.(message));
      this.sub.on("error", () => undefined); // ioredis reconnects; the relay's ticks notice a lapsed lease
    }
    this.listeners.set(channel, onMessage);
    await this.sub.subscribe(channel);
  }

  /** @internal */ async unlisten(channel: string): Promise<void> {
    this.listeners.delete(channel);
    await this.sub?.unsubscribe(channel).catch(() => undefined);
  }

  async close(): Promise<void> {
    const s = this.sub;
    this.sub = undefined;
    this.listeners.clear();
    if (s) await s.quit().catch(() => s.disconnect());
  }
}

type AbandonReason = "grace_expired" | "idle" | "no_operator" | "released";

class RedisOperatorChannel implements OperatorChannel {
  private readonly keys: ReturnType<typeof operatorKeys>;
  private readonly inbox: { operator: string; step: number; action: unknown; instruction?: string }[] = [];
  private released = false;
  private wake = new AbortController();
  private readonly stop = new AbortController();
  private opened: Promise<void> | undefined;
  private pump: Promise<void> | undefined;
  private leasedBy: string | undefined;
  private readonly waitStart = Date.now();
  private ended = false;
  private step = 0;
  private readonly graceMs: number;
  private readonly idleMs: number;
  private readonly waitMs: number;

  constructor(
    private readonly relay: OperatorRelay,
    private readonly e: OperatorEpisode,
  ) {
    this.keys = operatorKeys(relay.prefix);
    this.graceMs = e.graceMs ?? relay.settings.graceMs;
    this.idleMs = e.idleMs ?? relay.settings.idleMs;
    this.waitMs = e.waitMs ?? relay.settings.waitMs;
  }

  private entry(): WaitingEpisode {
    const e = this.e;
    return {
      v: 1,
      episodeId: e.episodeId,
      campaignId: e.campaignId,
      episodeIndex: e.episodeIndex,
      taskId: e.taskId,
      goal: e.goal.slice(0, 2000),
      worker: this.relay.worker.slice(0, 256),
      serial: e.serial,
      since: this.waitStart,
      step: this.step,
      graceMs: Math.round(this.graceMs),
      idleMs: Math.round(this.idleMs),
      ...(e.maxSteps !== undefined ? { maxSteps: e.maxSteps } : {}),
      ...(e.maxSec !== undefined ? { maxSec: e.maxSec } : {}),
    };
  }

  private open(): Promise<void> {
    this.opened ??= (async () => {
      await this.relay.listen(this.keys.actions(this.e.episodeId), (m) => this.onMessage(m));
      await this.relay.client.hset(this.keys.waiting, this.e.episodeId, JSON.stringify(this.entry()));
      this.pump = this.pumpFrames();
    })();
    return this.opened;
  }

  private onMessage(text: string): void {
    let m: unknown;
    try {
      m = JSON.parse(text);
    } catch {
      return;
    }
    if (typeof m !== "object" || m === null) return;
    const msg = m as Record<string, unknown>;
    if (msg.type === "release") this.released = true;
    else if (msg.type === "action" && typeof msg.operator === "string" && OPERATOR_NAME_PATTERN.test(msg.operator) && Number.isInteger(msg.step)) {
      if (this.inbox.length < 16) this.inbox.push({ operator: msg.operator, step: msg.step as number, action: msg.action, ...(typeof msg.instruction === "string" ? { instruction: msg.instruction } : {}) });
    } else return;
    this.wake.abort();
  }

  private async publish(ev: OperatorEvent, key?: string): Promise<void> {
    const text = JSON.stringify(ev);
    const r = this.relay.client;
    if (key) await r.set(key, text, "PX", OPERATOR_STATE_TTL_MS);
    await r.publish(this.keys.events(this.e.episodeId), text);
  }

  async ask(view: OperatorView, signal?: AbortSignal): Promise<OperatorAnswer> {
    if (view.goal) this.e.goal = view.goal; // a family's goal is rendered for the episode
    await this.open();
    this.step = view.step;
    const r = this.relay.client;
    await r.hset(this.keys.waiting, this.e.episodeId, JSON.stringify(this.entry()));
    await this.publish(
      {
        type: "view",
        step: view.step,
        goal: view.goal,
        screen: view.screen,
        ...(view.elements ? { elements: view.elements } : {}),
        ...(view.previous ? { previous: view.previous } : {}),
        ...(this.e.maxSteps !== undefined ? { maxSteps: this.e.maxSteps } : {}),
        ...(this.e.maxSec !== undefined ? { maxSec: this.e.maxSec } : {}),
        at: Date.now(),
      },
      this.keys.view(this.e.episodeId),
    );
    const stepStart = Date.now();
    for (;;) {
      if (signal?.aborted) throw new PolicyError("aborted", "the episode was cancelled while waiting for the operator");
      // Actions for an earlier step (sent before this view reached the page) are dropped.
      while (this.inbox.length && this.inbox[0]!.step !== view.step) this.inbox.shift();
      const next = this.inbox.shift();
      if (next) return { operator: next.operator, action: next.action, ...(next.instruction !== undefined ? { instruction: next.instruction } : {}) };
      if (this.released) this.abandon("released", "the operator left the episode");
      const holder = await r.get(this.keys.lease(this.e.episodeId)).catch(() => undefined);
      const now = Date.now();
      if (holder) {
        if (holder !== this.leasedBy) this.relay.log.info({ event: "operator:driving", episodeId: this.e.episodeId, operator: terminalSafe(holder) }, "an operator drives the episode");
        this.leasedBy = holder;
      } else if (holder === null && this.leasedBy) this.abandon("grace_expired", `operator ${this.leasedBy}'s page stayed closed past the grace period of ${this.graceMs} ms`);
      if (this.leasedBy && now - stepStart > this.idleMs) this.abandon("idle", `operator ${this.leasedBy} sent nothing for ${this.idleMs} ms (the idle limit)`);
      if (!this.leasedBy && now - this.waitStart > this.waitMs) this.abandon("no_operator", `no operator took the episode within ${this.waitMs} ms`);
      this.wake = new AbortController();
      const both = signal ? AbortSignal.any([this.wake.signal, signal]) : this.wake.signal;
      await sleep(TICK_MS, both);
    }
  }

  private abandon(reason: AbandonReason, detail: string): never {
    this.relay.farmMetrics.operatorAbandon(reason);
    this.relay.log.warn({ event: "operator:abandoned", episodeId: this.e.episodeId, reason, operator: this.leasedBy ? terminalSafe(this.leasedBy) : undefined, step: this.step }, "human episode abandoned by its operator");
    throw new PolicyError("operator_abandoned", detail);
  }

  /** The screen as JPEG frames, published when it changed, until the channel closes. */
  private async pumpFrames(): Promise<void> {
    const s = this.relay.settings;
    const device = this.relay.devices.device(this.e.serial);
    let last: Buffer | undefined;
    let seq = 0;
    while (!this.stop.signal.aborted) {
      const t0 = performance.now();
      try {
        const shot = await device.screenshot({ timeoutMs: 5000 });
        const at = Date.now();
        if ("rgba" in shot && !(last && last.equals(shot.rgba))) {
          last = Buffer.from(shot.rgba);
          const scale = Math.min(1, s.frameMaxSide / Math.max(shot.width, shot.height));
          const size = { width: Math.max(1, Math.round(shot.width * scale)), height: Math.max(1, Math.round(shot.height * scale)) };
          const jpeg = await encodeFrame({ width: shot.width, height: shot.height, channels: 4, data: shot.rgba }, { format: "jpeg", quality: s.jpegQuality, size });
          if (this.stop.signal.aborted) break;
          await this.publish({ type: "frame", seq: ++seq, at, mime: "image/jpeg", width: size.width, height: size.height, data: jpeg.toString("base64") }, this.keys.frame(this.e.episodeId));
        }
      } catch (e) {
        this.relay.log.debug({ event: "operator:frame-failed", episodeId: this.e.episodeId, error: coerceError(e).message }, "a frame for the operator failed");
        await sleep(500, this.stop.signal);
      }
      // Full pace once an operator drives; a slow look while the episode waits for one (watchers see 2 frames/s).
      const interval = this.leasedBy ? s.frameIntervalMs : Math.max(s.frameIntervalMs, IDLE_FRAME_MS);
      await sleep(Math.max(0, interval - (performance.now() - t0)), this.stop.signal);
    }
  }

  async end(info: { outcome: string; cause: string; steps: number }): Promise<void> {
    if (this.ended || !this.opened) return;
    this.ended = true;
    await this.finish({ type: "end", ...info, at: Date.now() });
  }

  private async finish(ev: OperatorEvent | undefined): Promise<void> {
    this.stop.abort();
    await this.pump?.catch(() => undefined);
    const r = this.relay.client;
    const id = this.e.episodeId;
    await r.hdel(this.keys.waiting, id).catch(() => undefined);
    await r.del(this.keys.view(id), this.keys.frame(id), this.keys.lease(id)).catch(() => undefined);
    if (ev) await r.publish(this.keys.events(id), JSON.stringify(ev)).catch(() => undefined);
  }

  async close(): Promise<void> {
    if (!this.opened) return;
    await this.opened.catch(() => undefined);
    if (!this.ended) {
      this.ended = true;
      await this.finish({ type: "end", outcome: "closed", cause: "closed", steps: this.step, at: Date.now() });
    }
    await this.relay.unlisten(this.keys.actions(this.e.episodeId));
  }
}
