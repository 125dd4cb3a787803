/**
 * Device heartbeats: what each worker says about each of its devices, in Redis with a TTL, so the
 * scheduler's fleet page and `farm devices` can show the fleet without asking any worker.
 *
 * Keys, under the queue prefix (one hash tag → one cluster slot, so the reader's MGET is legal):
 *   <prefix>:device:<worker>/<serial>   STRING  the heartbeat as JSON (≤ MAX_BEAT_CHARS), PX ttl
 *   <prefix>:devices                    ZSET    member <worker>/<serial>, score = expiry (ms)
 * Writers drop expired index members on every publish, so the index is bounded by the live fleet.
 * `device` must never be used as a queue name (BullMQ keys are `<prefix>:<queue>:…`).
 */
import type { RedisClient as Redis } from "./connection.ts";
import { z } from "zod";

export const DEVICE_BEAT_VERSION = 1;
/** Longest JSON value of one heartbeat; strings are cut to fit long before. */
export const MAX_BEAT_CHARS = 4096;
/** At most this many devices are read back (a bound on the page and the CLI, not on the farm). */
export const MAX_FLEET_DEVICES = 5000;

/** Serials as adb shows them (`emulator-5554`, `127.0.0.1:5555`, USB serials); no `/`, no spaces. */
export const DEVICE_SERIAL_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
/** Worker names (`--name`, default `<hostname>-<pid>`). */
export const WORKER_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,255}$/;

const text = (max: number) => z.string().max(max);

export const deviceBeatSchema = z.strictObject({
  v: z.literal(DEVICE_BEAT_VERSION),
  serial: z.string().regex(DEVICE_SERIAL_PATTERN),
  worker: z.string().regex(WORKER_NAME_PATTERN),
  host: text(256),
  transport: z.enum(["adb", "grpc"]),
  /** The slot's state: binding, ready, busy, recovering, unusable, closed. */
  state: text(32),
  campaignId: text(64).optional(),
  episodeIndex: z.int().min(0).optional(),
  taskId: text(128).optional(),
  /** Steps of the running episode so far. */
  step: z.int().min(0).optional(),
  stepsPerSec: z.number().min(0).max(1e6),
  relaunches: z.int().min(0),
  episodesDone: z.int().min(0),
  lastError: text(500).optional(),
  lastErrorAt: z.int().min(0).optional(),
  /** Where the worker serves this device's latest screen (http(s) only); the scheduler fetches only this. */
  screenUrl: z.url({ protocol: /^https?$/ }).max(500).optional(),
  /** When the worker wrote it (ms since epoch). */
  at: z.int().min(0),
});

export type DeviceBeat = z.infer<typeof deviceBeatSchema>;

export function deviceBeatKeys(prefix: string): { index: string; beat(worker: string, serial: string): string } {
  return { index: `${prefix}:devices`, beat: (worker, serial) => `${prefix}:device:${worker}/${serial}` };
}

/** Cuts every string field to its bound, so a long error message never makes a beat invalid. */
export function boundBeat(b: DeviceBeat): DeviceBeat {
  const cut = (s: string | undefined, n: number) => (s === undefined ? undefined : s.length > n ? `${s.slice(0, n - 1)}…` : s);
  const out: DeviceBeat = { ...b, host: cut(b.host, 256)!, state: cut(b.state, 32)! };
  if (b.lastError !== undefined) out.lastError = cut(b.lastError, 500);
  return out;
}

/** Writes the beats of one worker with a TTL, and drops expired members from the index. */
export async function publishDeviceBeats(redis: Redis, prefix: string, beats: readonly DeviceBeat[], ttlMs: number): Promise<void> {
  const keys = deviceBeatKeys(prefix);
  const now = Date.now();
  const m = redis.multi();
  m.zremrangebyscore(keys.index, "-inf", now);
  for (const raw of beats) {
    const b = boundBeat(raw);
    const json = JSON.stringify(b);
    if (json.length > MAX_BEAT_CHARS) continue; // cannot happen with the bounds above; never write more
    m.set(keys.beat(b.worker, b.serial), json, "PX", ttlMs);
    m.zadd(keys.index, now + ttlMs, `${b.worker}/${b.serial}`);
  }
  await m.exec();
}

/** Removes the beats of devices a worker no longer has (unbound, or the worker closing). */
export async function removeDeviceBeats(redis: Redis, prefix: string, worker: string, serials: readonly string[]): Promise<void> {
  if (serials.length === 0) return;
  const keys = deviceBeatKeys(prefix);
  const m = redis.multi();
  for (const s of serials) {
    m.del(keys.beat(worker, s));
    m.zrem(keys.index, `${worker}/${s}`);
  }
  await m.exec();
}

/**
 * The live fleet, sorted by worker then serial. A value that does not parse (another version, a
 * hand-written key) is skipped and counted in `invalid`.
 */
export async function readDeviceBeats(redis: Redis, prefix: string): Promise<{ devices: DeviceBeat[]; invalid: number }> {
  const keys = deviceBeatKeys(prefix);
  const members = await redis.zrangebyscore(keys.index, Date.now(), "+inf", "LIMIT", 0, MAX_FLEET_DEVICES);
  if (members.length === 0) return { devices: [], invalid: 0 };
  const values = await redis.mget(...members.map((m) => `${prefix}:device:${m}`));
  const devices: DeviceBeat[] = [];
  let invalid = 0;
  for (const v of values) {
    if (v === null) continue; // expired between the two reads
    let parsed: unknown;
    try {
      parsed = v.length <= MAX_BEAT_CHARS ? JSON.parse(v) : undefined;
    } catch {
      parsed = undefined;
    }
    const r = deviceBeatSchema.safeParse(parsed);
    if (r.success) devices.push(r.data);
    else invalid++;
  }
  devices.sort((a, b) => (a.worker === b.worker ? a.serial.localeCompare(b.serial) : a.worker.localeCompare(b.worker)));
  return { devices, invalid };
}
