/**
 * The LLM stand-in (@farm/local-services) in a child process, as a model server is never inside the measuring
 * process: its HTTP handling and prompt reading stay off the worker's event loop. `stats()` reads its `/stats`.
 */
import { fileURLToPath } from "node:url";
import type { LlmStandInOptions } from "@farm/local-services";
import { startNodeChild } from "./farm-child.ts";

export interface LlmChild {
  endpoint: string;
  /** Requests answered so far and the time spent on them (ms). */
  stats(): Promise<{ served: number; busyMs: number }>;
  close(): Promise<void>;
}

const MAIN = fileURLToPath(new URL("./llm-child-main.ts", import.meta.url));

export async function startLlmChild(opts: Pick<LlmStandInOptions, "solver" | "delayMs">): Promise<LlmChild> {
  let endpoint = "";
  const child = await startNodeChild(["--import", "tsx", MAIN, JSON.stringify(opts)], "the LLM stand-in", (line) => {
    endpoint = /^endpoint (http:\/\/\S+)$/.exec(line)?.[1] ?? endpoint;
    return endpoint !== "";
  });
  return {
    endpoint,
    async stats() {
      const r = await fetch(`${endpoint.replace(/\/v1$/, "")}/stats`);
      return (await r.json()) as { served: number; busyMs: number };
    },
    close: () => child.close(),
  };
}
