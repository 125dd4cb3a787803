/**
 * Per-device heartbeats of this worker (contract and keys: @farm/queue device-heartbeats.ts). Fed by
 * three small hooks: slot state changes, the runner's episode events, and the BullMQ job a slot takes
 * or fails; every `intervalMs` the live picture of each device is written to Redis with a TTL of a few
 * intervals, so a worker that dies disappears from the fleet by itself.
 */
import os from "node:os";
import type { EpisodeEvent } from "@farm/episode";
import { coerceError } from "@farm/errors";
import type { Logger } from "@farm/log";
import { DEVICE_BEAT_VERSION, publishDeviceBeats, removeDeviceBeats, type DeviceBeat } from "@farm/queue";
import type { RedisClient as Redis } from "@farm/queue";

export interface HeartbeatOptions {
  redis: Redis;
  prefix: string;
  worker: string;
  logger: Logger;
  /** `grpc` when the device's actions and frames go over its emulator's gRPC endpoint. */
  transportOf(serial: string): "adb" | "grpc";
  /** The worker's own HTTP base URL as others reach it; the screen URL of each device hangs off it. */
  baseUrl(): string | undefined;
  /** Skip a turn while Redis is down (its outage is logged elsewhere). */
  redisUp(): boolean;
  intervalMs?: number;
}

interface DeviceLive {
  state: string;
  campaignId?: string;
  episodeIndex?: number;
  taskId?: string;
  step?: number;
  lastError?: string;
  lastErrorAt?: number;
  relaunches: number;
  episodesDone: number;
  /** Steps counted since the last publish, for steps per second. */
  stepsSinceBeat: number;
}

export class DeviceHeartbeats {
  private readonly devices = new Map<string, DeviceLive>();
  private readonly gone = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private lastBeatAt = Date.now();
  private publishing: Promise<void> = Promise.resolve();
  private failedOnce = false;
  readonly intervalMs: number;
  private readonly host = os.hostname();
  /** The worker name as a heartbeat may carry it (see WORKER_NAME_PATTERN). */
  private readonly worker: string;

  constructor(private readonly opts: HeartbeatOptions) {
    this.intervalMs = opts.intervalMs ?? 2000;
    this.worker = opts.worker.replace(/[^A-Za-z0-9._:@-]/g, "_").replace(/^[^A-Za-z0-9]/, "w").slice(0, 256);
  }

  start(): void {
    this.timer = setInterval(() => void this.publish(), this.intervalMs);
    this.timer.unref();
  }

  private live(serial: string): DeviceLive {
    let d = this.devices.get(serial);
    if (!d) {
      d = { state: "binding", relaunches: 0, episodesDone: 0, stepsSinceBeat: 0 };
      this.devices.set(serial, d);
      this.gone.delete(serial);
    }
    return d;
  }

  /** A slot's state changed; `closed` removes the device from the fleet. */
  slotState(serial: string, state: string): void {
    if (state === "closed") {
      this.devices.delete(serial);
      this.gone.add(serial);
      return;
    }
    this.live(serial).state = state;
  }

  /** The runner's events (step counts, episode ends, recoveries, errors). */
  readonly onEvent = (e: EpisodeEvent): void => {
    const d = this.devices.get(e.serial);
    if (!d) return;
    switch (e.type) {
      case "episode:start":
        d.step = 0;
        d.taskId = e.taskId;
        break;
      case "step":
        d.step = e.step;
        d.stepsSinceBeat++;
        break;
      case "episode:end":
        d.episodesDone++;
        if (e.outcome !== "terminated" && e.cause !== "step_limit" && e.cause !== "time_limit" && e.cause !== "cancelled") this.error(d, `episode ${e.episodeIndex} ended ${e.cause}: ${e.causeDetail}`);
        break;
      case "device:recovery":
        d.relaunches++;
        if (!e.ok) this.error(d, `recovery ${e.attempt} failed: ${e.detail}`);
        break;
      case "device:unusable":
        this.error(d, `unusable: ${e.reason}`);
        break;
      case "device:bind":
        if (!e.ok) this.error(d, `bind failed: ${e.detail}`);
        break;
      default:
        break;
    }
  };

  /** A slot's BullMQ worker took a job (`data` as stored: checked for shape only). */
  jobActive(serial: string, data: unknown): void {
    const d = this.devices.get(serial);
    if (!d) return;
    const j = (typeof data === "object" && data !== null ? data : {}) as Record<string, unknown>;
    d.campaignId = typeof j.campaignId === "string" ? j.campaignId.slice(0, 64) : undefined;
    d.episodeIndex = Number.isSafeInteger(j.episodeIndex) && (j.episodeIndex as number) >= 0 ? (j.episodeIndex as number) : undefined;
    d.taskId = typeof j.taskId === "string" ? j.taskId.slice(0, 128) : undefined;
    d.step = undefined;
  }

  /** A job attempt on the device ended (done, or failed with `reason`). */
  jobEnded(serial: string, failedReason?: string): void {
    const d = this.devices.get(serial);
    if (!d) return;
    d.campaignId = d.episodeIndex = d.taskId = d.step = undefined;
    if (failedReason !== undefined) this.error(d, failedReason);
  }

  /** The host was cut off from Redis for `outageMs`: every device's next beat says so (as its last error). */
  cutOff(outageMs: number): void {
    const message = `cut off from Redis for ${(outageMs / 1000).toFixed(1)} s (no answer on the host's link; jobs held meanwhile ran elsewhere once their locks expired)`;
    for (const d of this.devices.values()) this.error(d, message);
  }

  private error(d: DeviceLive, message: string): void {
    d.lastError = message.slice(0, 500);
    d.lastErrorAt = Date.now();
  }

  /** The current beats (what `publish` writes). */
  beats(): DeviceBeat[] {
    const now = Date.now();
    const secs = Math.max(0.001, (now - this.lastBeatAt) / 1000);
    const base = this.opts.baseUrl();
    return [...this.devices].map(([serial, d]) => ({
      v: DEVICE_BEAT_VERSION,
      serial,
      worker: this.worker,
      host: this.host,
      transport: this.opts.transportOf(serial),
      state: d.state,
      ...(d.campaignId !== undefined ? { campaignId: d.campaignId } : {}),
      ...(d.episodeIndex !== undefined ? { episodeIndex: d.episodeIndex } : {}),
      ...(d.taskId !== undefined ? { taskId: d.taskId } : {}),
      ...(d.step !== undefined ? { step: d.step } : {}),
      stepsPerSec: Math.round((d.stepsSinceBeat / secs) * 10) / 10,
      relaunches: d.relaunches,
      episodesDone: d.episodesDone,
      ...(d.lastError !== undefined ? { lastError: d.lastError, lastErrorAt: d.lastErrorAt } : {}),
      ...(base ? { screenUrl: `${base}/devices/${encodeURIComponent(serial)}/screen` } : {}),
      at: now,
    }));
  }

  /** Writes every device's beat (TTL: 5 intervals) and removes the ones that went away. */
  publish(): Promise<void> {
    this.publishing = this.publishing.then(async () => {
      if (!this.opts.redisUp()) return;
      const beats = this.beats();
      const gone = [...this.gone];
      try {
        await publishDeviceBeats(this.opts.redis, this.opts.prefix, beats, this.intervalMs * 5);
        await removeDeviceBeats(this.opts.redis, this.opts.prefix, this.worker, gone);
        for (const s of gone) if (!this.devices.has(s)) this.gone.delete(s);
        for (const d of this.devices.values()) d.stepsSinceBeat = 0;
        this.lastBeatAt = Date.now();
        this.failedOnce = false;
      } catch (e) {
        // One line per run of failures, not one per beat.
        if (!this.failedOnce) this.opts.logger.warn({ event: "heartbeat:publish-failed", err: coerceError(e).message }, "device heartbeats not written (tried again every interval)");
        this.failedOnce = true;
      }
    });
    return this.publishing;
  }

  /** Stops beating and removes this worker's devices from the fleet. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    for (const s of this.devices.keys()) this.gone.add(s);
    this.devices.clear();
    await this.publish();
  }
}
