/**
 * @module @farm/policy
 * Policies choose actions from observations: seeded random, scripted, module, remote (HTTP); AndroidEnv touches or GUI-agent UI actions.
 */
export type * from "./types.ts";
export { PolicyError, isPolicyError, type PolicyErrorCode } from "./errors.ts";
export { ACTION_TYPES, parseAction, touch, lift, repeat } from "./action.ts";
export { UI_ACTION_TYPES, SCROLL_DIRECTIONS, GOAL_STATUSES, UI_TEXT_MAX_CHARS, parseUiAction, looksLikeUiAction, type UiAction, type UiActionType, type ScrollDirection, type GoalStatus } from "./ui-action.ts";
export { readAnswer, parseAnswer, GIVEN_MAX_CHARS, type ReadAnswer } from "./answer.ts";
export { randomPolicy, RANDOM_POLICY_VERSION, type RandomPolicyOptions } from "./random-policy.ts";
export { scriptedPolicy, type ScriptedPolicyOptions, type ScriptAction, type ScriptEnd } from "./scripted-policy.ts";
export { modulePolicy } from "./module-policy.ts";
export { httpPolicy, POLICY_VERSION_HEADER, POLICY_PROTOCOL_HEADER, type HttpPolicyOptions } from "./http-policy.ts";
export { PROTOCOL_ERROR_MAX_CHARS, type ForeignBody, type ForeignBodyListener } from "./foreign-body.ts";
export { PolicyBatcher, DEFAULT_BATCH_WINDOW_MS, DEFAULT_MAX_BATCH, type PolicyBatcherOptions } from "./http-batcher.ts";
export { hostAllowList, redactUrl, normalizeHost, UrlNotAllowedError, POLICY_ALLOWED_HOSTS_ENV, type HostAllowList } from "./url-guard.ts";
export type { WireRequest, WireEpisodeEnd, WireEpisode, WireObservation, WirePixels, PixelEncoding } from "./wire.ts";
export { POLICY_PROTOCOL } from "./wire.ts";
export { llmPolicy, LLM_API_KEY_ENV, llmApiKeyProblem, LLM_DEFAULTS, LLM_MODEL_PATTERN, DEFAULT_PROMPT_TEMPLATE, PROMPT_PLACEHOLDERS, loadPromptTemplate, checkTemplate, extractAction, type LlmPolicyOptions } from "./llm/index.ts";
export { encodePng } from "./png.ts";
export { policyFromSpec, parsePolicySpec, POLICY_SPEC_FORMS, type PolicySpecOptions, type ParsedPolicySpec } from "./spec.ts";
