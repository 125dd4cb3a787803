/** The `llm` policy (OpenAI-compatible chat completions), its options and prompt. */
export { llmPolicy } from "./llm-policy.ts";
export { LLM_API_KEY_ENV, llmApiKeyProblem, LLM_DEFAULTS, LLM_MODEL_PATTERN, type LlmPolicyOptions } from "./options.ts";
export { DEFAULT_PROMPT_TEMPLATE, PROMPT_PLACEHOLDERS, loadPromptTemplate, checkTemplate } from "./prompt.ts";
export { extractAction } from "./answer-text.ts";
export { LLM_KEY_HOSTS_ENV, DEFAULT_LLM_KEY_HOSTS, parseKeyHosts, keyHostProblem, llmSpecKeyProblem } from "./key-hosts.ts";
