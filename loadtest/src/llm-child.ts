/**
 * The LLM stand-in (@farm/local-services) in a child process, as a model server is never inside the measuring
 * process: its HTTP handling and prompt reading stay off the worker's event loop. `stats()` reads its `/stats`.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { LlmStandInOptions } from "@farm/local-services";

export interface LlmChild {
  endpoint: string;
  /** Requests answered so far and the time spent on them (ms). */
  stats(): Promise<{ served: number; busyMs: number }>;
  close(): Promise<void>;
}

const MAIN = fileURLToPath(new URL("./llm-child-main.ts", import.meta.url));

export async function startLlmChild(opts: Pick<LlmStandInOptions, "solver" | "delayMs">): Promise<LlmChild> {
  const child = spawn(process.execPath, ["--import", "tsx", MAIN, JSON.stringify(opts)], { stdio: ["ignore", "pipe", "inherit"] });
  const exited = once(child, "exit");
  const endpoint = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      const m = /^endpoint (http:\/\/\S+)$/.exec(line);
      if (m) resolve(m[1]!);
    });
    void exited.then(() => reject(new Error("the LLM stand-in child exited before it listened")));
  });
  return {
    endpoint,
    async stats() {
      const r = await fetch(`${endpoint.replace(/\/v1$/, "")}/stats`);
      return (await r.json()) as { served: number; busyMs: number };
    },
    async close() {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}
