/**
 * The `llm` policy's settings a campaign or a command line may set, and their bounds: the one table that
 * resolveLlmOptions, the CLI's `--llm-*` flags and @farm/queue's job schema (`llmPolicySettingsSchema`) check.
 */
export const LLM_SETTING_BOUNDS = {
  maxTokens: { min: 1, max: 32_768 },
  temperature: { min: 0, max: 2 },
  timeoutMs: { min: 100, max: 600_000 },
  concurrency: { min: 1, max: 1024 },
  screenshotMaxSide: { min: 32, max: 4096 },
} as const;

/** Model names as servers spell them: `Qwen/Qwen2.5-VL-7B-Instruct`, `llama3.2-vision:11b`, `gpt-4o-mini`. */
export const LLM_MODEL_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/+-]{0,127}$/;
