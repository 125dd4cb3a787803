/**
 * `farm trajectories view PATH…`: the episode viewer over a local folder of Avro files (or files) or a Parquet data
 * set, on a loopback HTTP server; prints its URL and serves until Ctrl-C.
 */
import type { Command } from "commander";
import { cliConfig } from "../config.ts";
import { parseIntOption } from "./options.ts";

export function registerViewCommand(trajectories: Command): void {
  trajectories
    .command("view")
    .description("the episode viewer in the browser: goal, outcome, checks and a step player (screen, action drawn, elements, model text), over Avro files or a Parquet data set; serves on loopback until Ctrl-C")
    .argument("<paths...>", "trajectory files or folders, or one data set folder (written by `farm trajectories export --format parquet`)")
    .option("--port <port>", "HTTP port on 127.0.0.1 (0 = a free one; `farm report` links point at 8421)", "8421")
    .option("--host <host>", "loopback address to bind: 127.0.0.1, ::1 or localhost", "127.0.0.1")
    .action(async (paths: string[], opts: { port: string; host: string }) => {
      const [{ startViewerServer }, { runUntilSignal, untilAborted }, { createLogger }] = await Promise.all([import("@farm/scheduler"), import("@farm/lifecycle"), import("@farm/log")]);
      const log = createLogger({ service: "viewer", level: "warn" });
      const server = await startViewerServer({ paths, port: parseIntOption("port", opts.port, 0) ?? 8421, host: opts.host, log, ...cliConfig().trajectoryRead });
      process.stdout.write(`episode viewer: ${server.url}view/  (reports: ${server.url}report; Ctrl-C stops)\n`);
      await runUntilSignal(async (stop) => {
        await untilAborted(stop);
        await server.close();
      });
    });
}
