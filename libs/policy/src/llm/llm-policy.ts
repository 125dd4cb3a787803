/**
 * The `llm` policy: each step asks a model served behind an OpenAI-compatible chat-completions API (vLLM, SGLang,
 * llama.cpp's server, Ollama) for one AndroidWorld JSON action, given the goal, the history, the elements and the
 * screenshot. An answer without a usable action is asked again with a short correction (invalidRetries), then
 * recorded as an invalid step; HTTP trouble is retried in chat-client.ts, then thrown as a PolicyError.
 */
import { createHash } from "node:crypto";
import { performance } from "node:perf_hooks";
import { coerceError } from "@farm/errors";
import { GIVEN_MAX_CHARS } from "../answer.ts";
import { snippet } from "../foreign-body.ts";
import type { EpisodeContext, Observation, Policy, PolicyDecision, PolicyUsage } from "../types.ts";
import { parseUiAction, type UiAction } from "../ui-action.ts";
import { redactUrl } from "../url-guard.ts";
import { extractAction } from "./answer-text.ts";
import { ChatClient, type ChatMessage, type ChatReply, type ContentPart } from "./chat-client.ts";
import { resolveLlmOptions, type LlmPolicyOptions, type ResolvedLlmOptions } from "./options.ts";
import { checkTemplate, DEFAULT_PROMPT_TEMPLATE, renderPrompt } from "./prompt.ts";
import { elementLines, PromptHistory } from "./screen-text.ts";
import { screenshotDataUrl } from "./screenshot.ts";
import { llmActDeadlineMs } from "./act-deadline.ts";

const clip = (s: string) => (s.length > GIVEN_MAX_CHARS ? s.slice(0, GIVEN_MAX_CHARS) : s);

/** The action, or why it cannot be used (our words, never the model's text: the reason is shown back to it). */
function usable(answer: string, elementCount: number | undefined): { ui: UiAction } | { invalid: string } {
  const found = extractAction(answer);
  if ("invalid" in found) return found;
  const ui = parseUiAction(found.value);
  if ("invalid" in ui) return ui;
  if (ui.index !== undefined && elementCount !== undefined && ui.index >= elementCount) {
    return { invalid: `index ${ui.index} is not on the screen (elements 0 to ${elementCount - 1})` };
  }
  return { ui };
}

function correction(reason: string): string {
  return `That answer could not be used: ${reason}. Answer again with exactly one JSON action from the list, for example:\nAction: {"action_type": "click", "index": 0}`;
}

class Tally {
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

export function llmPolicy(options: LlmPolicyOptions): Policy<PolicyDecision> {
  const template = checkTemplate(options.promptTemplate ?? DEFAULT_PROMPT_TEMPLATE, "llm policy prompt");
  const o: ResolvedLlmOptions = resolveLlmOptions(options, template);
  const client = new ChatClient(o);
  const shownEndpoint = redactUrl(o.endpoint);
  const history = new PromptHistory(o.historySteps);
  let ctx: EpisodeContext | undefined;
  // What the prompt is made of decides what the model does: the template and sampling settings name the version.
  const version = createHash("sha256").update(`${template}\u0000${o.maxTokens}\u0000${o.temperature}\u0000${o.screenshot}`).digest("hex").slice(0, 12);

  async function firstMessage(obs: Observation): Promise<ChatMessage> {
    const screen = obs.screen ?? ctx?.screen ?? { width: 0, height: 0 };
    const text = renderPrompt(template, {
      goal: obs.goal ?? ctx?.goal ?? "",
      history: history.text(),
      elements: elementLines(obs.elements),
      screen_width: String(screen.width),
      screen_height: String(screen.height),
      step: String(obs.stepIndex + 1),
    });
    if (!o.screenshot || !obs.pixels) return { role: "user", content: text };
    const parts: ContentPart[] = [{ type: "text", text }, { type: "image_url", image_url: { url: await screenshotDataUrl(obs.pixels, o.screenshotMaxSide) } }];
    return { role: "user", content: parts };
  }

  /** One line for a step that needed more than one try or gave no action (not one per try). */
  function logStreak(t: Tally, outcome: "ok" | "invalid" | "error", reason?: string): void {
    if (!o.logger || (outcome === "ok" && t.tried.exchanges <= 1)) return;
    o.logger.warn(
      { event: "policy:llm-retries", endpoint: shownEndpoint, model: o.model, outcome, exchanges: t.tried.exchanges, httpRetries: t.tried.httpRetries, invalidAnswers: t.invalidAnswers, ...(reason ? { reason: snippet(reason) } : {}) },
      outcome === "ok" ? "the model's answer needed more than one try" : outcome === "invalid" ? "the model gave no usable action; the step is recorded as invalid" : "the model server failed the step",
    );
  }

  return {
    name: `llm:${o.model}@${client.endpoint.url.host}${client.endpoint.url.pathname.replace(/\/chat\/completions$/, "")}`,
    version,
    needsPixels: o.screenshot,
    needsElements: true,
    actDeadlineMs: llmActDeadlineMs(o),
    async reset(c) {
      ctx = { ...c, screen: { ...c.screen } };
      history.clear();
    },
    async act(obs, signal) {
      if (obs.previous) history.add(obs.previous);
      const messages: ChatMessage[] = [await firstMessage(obs)];
      const t = new Tally();
      let reply: ChatReply;
      for (let n = 0; ; n++) {
        try {
          reply = await client.complete(messages, signal, t.tried);
        } catch (e) {
          logStreak(t, "error", coerceError(e).message);
          throw e;
        }
        t.add(reply);
        const r = usable(reply.content, obs.elements?.length);
        if ("ui" in r) {
          logStreak(t, "ok");
          return { action: r.ui, given: clip(reply.content), usage: t.usage() };
        }
        t.invalidAnswers++;
        if (n >= o.invalidRetries) {
          logStreak(t, "invalid", r.invalid);
          return { invalid: r.invalid, given: clip(reply.content), usage: t.usage() };
        }
        messages.push({ role: "assistant", content: clip(reply.content) }, { role: "user", content: correction(r.invalid) });
      }
    },
    async close() {
      client.close();
    },
  };
}
