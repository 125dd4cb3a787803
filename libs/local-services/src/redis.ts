import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startManagedChild } from "./child.ts";
import { freePort, waitForPort } from "@farm/net-ports";

export interface LocalRedis {
  readonly port: number;
  readonly url: string;
  /** The server's data folder (AOF files when `appendOnly`). */
  readonly dir: string;
  close(): Promise<void>;
  /** Stops the server without waiting for a clean shutdown (for restart tests). */
  kill(): void;
  /** Starts the server again on the same port and data folder (after kill() or a crash). */
  restart(): Promise<void>;
}

export interface StartRedisOptions {
  port?: number;
  /**
   * Persist every write to an append-only file, fsynced before the reply (`appendfsync always`): a claim
   * Redis acknowledged survives a Redis crash. Default false.
   */
  appendOnly?: boolean;
  /** Require this password (for tests of credential errors). */
  requirePass?: string;
  /** The redis-server executable. Default `redis-server` on PATH. */
  bin?: string;
}

/** Starts a private redis-server (no persistence unless `appendOnly`) on a free loopback port. */
export async function startRedis(opts: StartRedisOptions = {}): Promise<LocalRedis> {
  const port = opts.port ?? (await freePort());
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "farm-redis-"));
  const bin = opts.bin ?? "redis-server";
  const args = [
    "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", opts.appendOnly ? "yes" : "no",
    "--dir", dir, "--protected-mode", "yes", "--loglevel", "warning",
    ...(opts.appendOnly ? ["--appendfsync", "always"] : []),
    ...(opts.requirePass ? ["--requirepass", opts.requirePass] : []),
  ];
  const launch = async () => {
    const c = startManagedChild(bin, args);
    try {
      await waitForPort(port, 10_000);
    } catch (e) {
      await c.close();
      throw new Error(`redis-server did not start on port ${port} (is the Debian package redis-server installed? run: bash deploy/bootstrap.sh)\n${c.output()}`, { cause: e });
    }
    return c;
  };
  let child = await launch();
  return {
    port,
    dir,
    url: `redis://127.0.0.1:${port}`,
    async close() {
      await child.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
    kill() {
      child.process.kill("SIGKILL");
    },
    async restart() {
      if (child.process.exitCode === null && child.process.signalCode === null) {
        child.process.kill("SIGKILL");
        await new Promise<void>((r) => child.process.once("exit", () => r()));
      }
      child = await launch();
    },
  };
}
