/**
 * The `llm` policy's flags, shared by `farm run` and `farm submit`: `--policy llm --llm-endpoint URL --llm-model NAME`
 * (or `--policy llm:<model>@<endpoint>`) and how the model is asked. The API key is never a flag: FARM_LLM_API_KEY.
 */
import type { Command } from "commander";
import { LLM_SETTING_BOUNDS as B } from "@farm/policy/settings";
import { parseIntOption, shown } from "./options.ts";

export interface LlmFlags {
  llmEndpoint?: string;
  llmModel?: string;
  llmMaxTokens?: string;
  llmTemperature?: string;
  llmTimeoutMs?: string;
  llmConcurrency?: string;
  llmNoScreenshot?: boolean;
  llmScreenshotMaxSide?: string;
  llmPrompt?: string;
}

/** What the job (or `farm run`) hands the policy: @farm/queue's llmPolicySettingsSchema, the same names. */
export interface LlmSettings {
  maxTokens?: number;
  temperature?: number;
  timeoutMs?: number;
  concurrency?: number;
  screenshot?: boolean;
  screenshotMaxSide?: number;
  promptTemplate?: string;
}

export function addLlmOptions(cmd: Command): Command {
  return cmd
    .option("--llm-endpoint <url>", "with --policy llm: the OpenAI-compatible API's base URL, ending in /v1 (vLLM http://host:8000/v1, llama-server http://host:8080/v1); API key from FARM_LLM_API_KEY")
    .option("--llm-model <name>", "with --policy llm: the model name the server knows")
    .option("--llm-max-tokens <n>", "llm: max_tokens of each answer (default 256)")
    .option("--llm-temperature <t>", "llm: sampling temperature 0..2 (default 0)")
    .option("--llm-timeout-ms <ms>", "llm: deadline of one request (default 60000)")
    .option("--llm-concurrency <n>", "llm: requests in flight at once to the endpoint from one process (default 8)")
    .option("--llm-no-screenshot", "llm: send no screenshot (text-only models)")
    .option("--llm-screenshot-max-side <px>", "llm: the screenshot's longer side after downscaling (default 768)")
    .option("--llm-prompt <file>", "llm: a prompt template file instead of the default (placeholders {{goal}} {{history}} {{elements}} {{screen_width}} {{screen_height}} {{step}})");
}

function temperatureOf(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = /^\d{1,2}(\.\d{1,6})?$/.test(v) ? Number(v) : NaN;
  if (!(n >= B.temperature.min && n <= B.temperature.max)) throw new Error(`--llm-temperature must be a number in ${B.temperature.min}..${B.temperature.max}, got '${shown(v)}'`);
  return n;
}

/**
 * The policy spec and the llm settings from `--policy` and the `--llm-*` flags. `loadPrompt` reads and checks a
 * template file (the policy lib's loadPromptTemplate). `--llm-*` flags with another policy are an error.
 */
export function llmPolicyChoice(policy: string, o: LlmFlags, loadPrompt: (file: string) => string): { spec: string; llm?: LlmSettings } {
  const isLlm = policy === "llm" || policy.startsWith("llm:");
  const given = Object.entries(o).filter(([k, v]) => k.startsWith("llm") && v !== undefined).map(([k]) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`);
  if (!isLlm) {
    if (given.length) throw new Error(`${given.join(", ")} only go with --policy llm`);
    return { spec: policy };
  }
  let spec = policy;
  if (policy === "llm") {
    if (!o.llmEndpoint || !o.llmModel) throw new Error("--policy llm needs --llm-endpoint URL (ending in /v1) and --llm-model NAME");
    spec = `llm:${o.llmModel}@${o.llmEndpoint}`;
  } else if (o.llmEndpoint || o.llmModel) {
    throw new Error("--policy llm:<model>@<endpoint> already names model and endpoint; drop --llm-endpoint / --llm-model or use --policy llm");
  }
  const temperature = temperatureOf(o.llmTemperature);
  const llm: LlmSettings = {
    ...(o.llmMaxTokens !== undefined ? { maxTokens: parseIntOption("llm-max-tokens", o.llmMaxTokens, B.maxTokens.min, B.maxTokens.max)! } : {}),
    ...(temperature !== undefined ? { temperature } : {}),
    ...(o.llmTimeoutMs !== undefined ? { timeoutMs: parseIntOption("llm-timeout-ms", o.llmTimeoutMs, B.timeoutMs.min, B.timeoutMs.max)! } : {}),
    ...(o.llmConcurrency !== undefined ? { concurrency: parseIntOption("llm-concurrency", o.llmConcurrency, B.concurrency.min, B.concurrency.max)! } : {}),
    ...(o.llmNoScreenshot ? { screenshot: false } : {}),
    ...(o.llmScreenshotMaxSide !== undefined ? { screenshotMaxSide: parseIntOption("llm-screenshot-max-side", o.llmScreenshotMaxSide, B.screenshotMaxSide.min, B.screenshotMaxSide.max)! } : {}),
    ...(o.llmPrompt !== undefined ? { promptTemplate: loadPrompt(o.llmPrompt) } : {}),
  };
  return Object.keys(llm).length ? { spec, llm } : { spec };
}
