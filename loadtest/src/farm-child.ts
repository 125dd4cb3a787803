/**
 * A `farm <command>` child of a benchmark (simulators, the scheduler), as real ones are never inside the
 * measuring process: started with startManagedChild (its output kept for error messages, killed should this process
 * die), logging at warn, and ready once `ready` accepts a line of its stdout.
 */
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { startManagedChild, type ManagedChild } from "@farm/local-services";
import { childProfileDir } from "./settings.ts";

const FARM = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../services/cli/bin/farm.js");

export function startFarmChild(args: string[], ready: (line: string) => boolean): Promise<ManagedChild> {
  return startNodeChild([FARM, ...args], `farm ${args[0]}`, ready);
}

/** With FARM_BENCH_PROF_DIR set, each child writes a V8 CPU profile there (node's --cpu-prof is refused in NODE_OPTIONS). */
function profileArgs(): string[] {
  const dir = childProfileDir();
  return dir ? ["--cpu-prof", `--cpu-prof-dir=${dir}`] : [];
}

/** `node <nodeArgs>` as a managed child, logging at warn, ready once `ready` accepts a line of its stdout. */
export async function startNodeChild(nodeArgs: string[], what: string, ready: (line: string) => boolean): Promise<ManagedChild> {
  const c = startManagedChild(process.execPath, [...profileArgs(), ...nodeArgs], { ...process.env, FARM_LOG_LEVEL: "warn" });
  const lines = createInterface({ input: c.process.stdout! });
  try {
    await new Promise<void>((resolve, reject) => {
      lines.on("line", (line) => {
        if (ready(line)) resolve();
      });
      c.process.once("exit", () => reject(new Error(`${what} exited early:\n${c.output()}`)));
    });
  } catch (e) {
    await c.close();
    throw e;
  }
  return c;
}
