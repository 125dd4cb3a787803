/**
 * `farm devices [--json]`: the fleet from the workers' device heartbeats (Redis, or the scheduler's
 * `GET /devices` with --api): one row per device, grouped by worker; the same rows as the fleet page.
 */
import { cliConfig } from "../config.ts";
import type { Command } from "commander";
import type { DeviceBeat } from "@farm/queue";
import type { CommandModule } from "./types.ts";
import { blankUnsafe } from "@farm/terminal-text";

interface DevicesOptions {
  api?: string;
  token?: string;
  redis?: string;
  prefix?: string;
  json?: boolean;
}

const COLUMNS = ["WORKER", "SERIAL", "HOST", "TRANSPORT", "STATE", "CAMPAIGN", "EPISODE", "STEP", "STEPS/S", "RELAUNCHES", "LAST ERROR"] as const;

/** Control and bidi characters out, bounded: a heartbeat is data from the network. */
const clean = (s: string, max: number) => {
  const t = blankUnsafe(s);
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
};

export function deviceRows(devices: readonly DeviceBeat[], now = Date.now()): string[][] {
  return devices.map((d) => [
    d.worker,
    d.serial,
    d.host,
    d.transport,
    d.state,
    d.campaignId ?? "-",
    d.episodeIndex !== undefined ? `#${d.episodeIndex}` : "-",
    d.step !== undefined ? String(d.step) : "-",
    d.stepsPerSec.toFixed(1),
    String(d.relaunches),
    d.lastError ? `${clean(d.lastError, 80)} (${Math.max(0, Math.round((now - (d.lastErrorAt ?? now)) / 1000))} s ago)` : "-",
  ].map((c) => clean(c, 120)));
}

export function formatDeviceTable(devices: readonly DeviceBeat[]): string {
  if (devices.length === 0) return "no devices: no worker has sent a heartbeat in the last few seconds\n";
  const rows = [[...COLUMNS], ...deviceRows(devices)];
  const widths = COLUMNS.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join("  ").trimEnd()).join("\n") + "\n";
}

async function loadFleet(o: DevicesOptions): Promise<{ devices: DeviceBeat[]; invalid: number }> {
  const api = o.api ?? cliConfig().apiUrl;
  if (api) {
    const token = o.token ?? cliConfig().apiToken;
    const res = await fetch(new URL("/devices", api), { headers: token ? { authorization: `Bearer ${token}` } : {}, signal: AbortSignal.timeout(15_000) });
    if (!res.ok) throw new Error(`GET ${new URL("/devices", api).href}: HTTP ${res.status}: ${(await res.text()).slice(0, 300)}`);
    return (await res.json()) as { devices: DeviceBeat[]; invalid: number };
  }
  const { createRedisClient, readDeviceBeats, resolveQueuePrefix } = await import("@farm/queue");
  const redis = createRedisClient(o.redis ?? cliConfig().redisUrl);
  try {
    return await readDeviceBeats(redis, resolveQueuePrefix(o.prefix ?? cliConfig().queuePrefix));
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
}

export const devicesCommand: CommandModule = {
  register(program: Command) {
    program
      .command("devices")
      .description("the fleet: every worker's devices from their heartbeats (state, current campaign/episode/step, steps/s, relaunches, last error)")
      .option("--json", "print { devices: [...], invalid } as JSON")
      .option("--api <url>", "read through the scheduler's HTTP API (default: FARM_API_URL; unset = Redis directly)")
      .option("--token <token>", "API token (default: FARM_API_TOKEN)")
      .option("--redis <url>", "Redis URL when not using --api (default: REDIS_URL or redis://127.0.0.1:6379)")
      .option("--prefix <prefix>", "queue prefix (default: FARM_QUEUE_PREFIX or {farm})")
      .action(async (o: DevicesOptions) => {
        const fleet = await loadFleet(o);
        if (o.json) process.stdout.write(`${JSON.stringify(fleet, null, 2)}\n`);
        else {
          process.stdout.write(formatDeviceTable(fleet.devices));
          if (fleet.invalid > 0) process.stderr.write(`${fleet.invalid} heartbeat(s) could not be read (another farm version?)\n`);
        }
      });
  },
};
