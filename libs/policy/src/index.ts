/**
 * @module @farm/policy
 * Policies choose actions from observations: seeded random, scripted, module, remote (HTTP); AndroidEnv touches or GUI-agent UI actions.
 */
export type * from "./types.ts";
export { PolicyError, isPolicyError, type PolicyErrorCode } from "./errors.ts";
export { ACTION_TYPES, touch, lift, repeat } from "./action.ts";
export { parseUiAction, type UiAction, type UiActionType, type ScrollDirection, type GoalStatus } from "./ui-action.ts";
export { readAnswer, readPolicyVersion, parseWireAnswer, GIVEN_MAX_CHARS, POLICY_VERSION_MAX_CHARS, type ReadAnswer } from "./answer.ts";
export { randomPolicy, type RandomPolicyOptions } from "./random-policy.ts";
export { scriptedPolicy, type ScriptedPolicyOptions, type ScriptAction, type ScriptEnd } from "./scripted-policy.ts";
export { modulePolicy } from "./module-policy.ts";
export { httpPolicy, type HttpPolicyOptions } from "./http-policy.ts";
export { type ForeignBody, type ForeignBodyListener } from "./foreign-body.ts";
export { PolicyBatcher, type PolicyBatcherOptions } from "./http-batcher.ts";
export { hostAllowList, redactUrl, UrlNotAllowedError, type HostAllowList } from "./url-guard.ts";
export type { WireRequest, WireEpisodeEnd, WireEpisode, WireObservation, WirePixels, PixelEncoding } from "./wire.ts";
export { llmPolicy, LLM_API_KEY_ENV, llmApiKeyProblem, loadPromptTemplate, type LlmPolicyOptions, LLM_KEY_HOSTS_ENV, DEFAULT_LLM_KEY_HOSTS, parseKeyHosts, keyHostProblem, llmSpecKeyProblem } from "./llm/index.ts";
export { LLM_MODEL_PATTERN, LLM_SETTING_BOUNDS } from "./llm/bounds.ts";
export { PROMPT_TEMPLATE_MAX_CHARS } from "./llm/prompt.ts";
export { policyFromSpec, type PolicySpecOptions, type ParsedPolicySpec } from "./spec.ts";
export { humanPolicy, OPERATOR_ID_PATTERN, INSTRUCTION_MAX_CHARS, type HumanPolicyOptions, type OperatorChannel, type OperatorView, type OperatorAnswer } from "./human-policy.ts";
export { shownScreenSize } from "./screen-size.ts";
