/**
 * `@farm/policy/settings`: what a service's config, a command line or a job schema checks about policies, without
 * loading the policies themselves (their HTTP clients, image scaling, answers): the `llm` policy's setting bounds,
 * model-name pattern, template size and template file loader, the API key's variable and check, where the key may go, and the
 * remote-policy host allow-list. The same definitions the package's index exports.
 */
export { LLM_MODEL_PATTERN, LLM_SETTING_BOUNDS } from "./llm/bounds.ts";
export { LLM_API_KEY_ENV, llmApiKeyProblem } from "./llm/options.ts";
export { LLM_KEY_HOSTS_ENV, DEFAULT_LLM_KEY_HOSTS, parseKeyHosts, keyHostProblem, llmSpecKeyProblem } from "./llm/key-hosts.ts";
export { PROMPT_TEMPLATE_MAX_CHARS, loadPromptTemplate } from "./llm/prompt.ts";
export { hostAllowList, type HostAllowList } from "./url-guard.ts";
