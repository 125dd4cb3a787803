/** One act()'s tries and tokens: HTTP exchanges and retries, invalid answers, token counts, its latency. */
import { performance } from "node:perf_hooks";
import type { PolicyUsage } from "../types.ts";
import type { ChatReply } from "./chat-client.ts";

export class Tally {
  readonly started = performance.now();
  readonly tried = { exchanges: 0, httpRetries: 0 };
  invalidAnswers = 0;
  promptTokens?: number;
  completionTokens?: number;

  add(r: ChatReply): void {
    if (r.promptTokens !== undefined) this.promptTokens = (this.promptTokens ?? 0) + r.promptTokens;
    if (r.completionTokens !== undefined) this.completionTokens = (this.completionTokens ?? 0) + r.completionTokens;
  }

  usage(): PolicyUsage {
    return {
      ...(this.promptTokens !== undefined ? { promptTokens: this.promptTokens } : {}),
      ...(this.completionTokens !== undefined ? { completionTokens: this.completionTokens } : {}),
      latencyMs: Math.round((performance.now() - this.started) * 1000) / 1000,
      attempts: this.tried.exchanges,
    };
  }
}
