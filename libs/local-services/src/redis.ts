import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnManaged } from "./child.ts";
import { freePort, waitForPort } from "./ports.ts";

export interface LocalRedis {
  readonly port: number;
  readonly url: string;
  stop(): Promise<void>;
  /** Stops the server without waiting for a clean shutdown (for restart tests). */
  kill(): void;
}

/** Starts a private redis-server (no persistence) on a free loopback port. */
export async function startRedis(opts: { port?: number } = {}): Promise<LocalRedis> {
  const port = opts.port ?? (await freePort());
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "farm-redis-"));
  const bin = process.env.REDIS_SERVER_BIN ?? "redis-server";
  const child = spawnManaged(bin, [
    "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
    "--dir", dir, "--protected-mode", "yes", "--loglevel", "warning",
  ]);
  try {
    await waitForPort(port, 10_000);
  } catch (e) {
    await child.stop();
    throw new Error(`redis-server did not start on port ${port} (is the Debian package redis-server installed? run: bash deploy/bootstrap.sh)\n${child.output()}`, { cause: e });
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      await child.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
    kill() {
      child.process.kill("SIGKILL");
    },
  };
}
