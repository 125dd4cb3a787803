/**
 * The CLI form of a policy (`--policy …`):
 *   random | random:<seed>       seeded random (the seed is only the default before the first reset)
 *   scripted:<file>              actions from a JSON / JSONL file
 *   module:<file>                a JS/TS file exporting createPolicy(options) or a default policy
 *   http:<url> | <http(s) URL>   a remote policy; `http:https://host/act` and `https://host/act` both work
 *   http-batch:<url>             a remote policy whose steps travel in host-level batches (http-batcher.ts)
 *   llm:<model>@<endpoint>       a model behind an OpenAI-compatible API; endpoint = base URL ending in /v1 (llm/)
 *   human                        a person in the browser drives the device (human-policy.ts; the host supplies the relay)
 * Relative files resolve against `opts.baseDir` (default: the current directory).
 */
import { resolve } from "node:path";
import { PolicyError } from "./errors.ts";
import { PolicyBatcher } from "./http-batcher.ts";
import { httpPolicy, type HttpPolicyOptions } from "./http-policy.ts";
import { llmPolicy, LLM_MODEL_PATTERN, type LlmPolicyOptions } from "./llm/index.ts";
import { humanPolicy, type HumanPolicyOptions } from "./human-policy.ts";
import { modulePolicy } from "./module-policy.ts";
import { randomPolicy, type RandomPolicyOptions } from "./random-policy.ts";
import { scriptedPolicy, type ScriptedPolicyOptions } from "./scripted-policy.ts";
import type { Policy } from "./types.ts";

export interface PolicySpecOptions {
  baseDir?: string;
  random?: RandomPolicyOptions;
  scripted?: ScriptedPolicyOptions;
  /** Passed to a module's createPolicy(options). */
  module?: Record<string, unknown>;
  http?: HttpPolicyOptions;
  /** The host's batcher for `http-batch:` policies; without one, each such policy gets its own (batches of one device). */
  batcher?: PolicyBatcher;
  /** Options of `llm:` policies (the spec names model and endpoint). */
  llm?: Omit<LlmPolicyOptions, "endpoint" | "model">;
  /** The operator relay of a `human` policy (a host that relays none refuses the spec). */
  human?: HumanPolicyOptions;
}

export const POLICY_SPEC_FORMS = "random, random:<seed>, scripted:<file>, module:<file>, http:<url>, http-batch:<url>, llm:<model>@<endpoint URL ending in /v1>, human";

export type ParsedPolicySpec =
  | { kind: "random"; seed?: number }
  | { kind: "scripted"; file: string }
  | { kind: "module"; file: string }
  | { kind: "http"; url: string }
  | { kind: "http-batch"; url: string }
  | { kind: "llm"; model: string; endpoint: string }
  | { kind: "human" };

export function parsePolicySpec(spec: string): ParsedPolicySpec {
  const s = spec.trim();
  const bad = (why: string) => new PolicyError("bad_spec", `policy spec ${JSON.stringify(spec)}: ${why}; use one of ${POLICY_SPEC_FORMS}`);
  if (/^https?:\/\//i.test(s)) return { kind: "http", url: s };
  const colon = s.indexOf(":");
  const kind = colon < 0 ? s : s.slice(0, colon);
  const arg = colon < 0 ? "" : s.slice(colon + 1);
  switch (kind) {
    case "random": {
      if (arg === "") return { kind: "random" };
      const seed = Number(arg);
      if (!Number.isSafeInteger(seed)) throw bad("the seed must be an integer");
      return { kind: "random", seed };
    }
    case "scripted":
    case "module":
      if (arg === "") throw bad(`${kind}: needs a file`);
      return { kind, file: arg };
    case "http":
      if (!/^https?:\/\//i.test(arg)) throw bad("http: needs an http:// or https:// URL");
      return { kind: "http", url: arg };
    case "http-batch":
      if (!/^https?:\/\//i.test(arg)) throw bad("http-batch: needs an http:// or https:// URL");
      return { kind: "http-batch", url: arg };
    case "llm": {
      const m = /^(.+?)@(https?:\/\/.+)$/i.exec(arg);
      if (!m) throw bad("llm: needs <model>@<endpoint>, e.g. llm:Qwen/Qwen2.5-VL-7B-Instruct@http://127.0.0.1:8000/v1");
      if (!LLM_MODEL_PATTERN.test(m[1]!)) throw bad("llm: the model name must be 1-128 letters, digits and . _ : / + -");
      return { kind: "llm", model: m[1]!, endpoint: m[2]! };
    }
    case "human":
      if (arg !== "") throw bad("human takes no argument");
      return { kind: "human" };
    default:
      throw bad(`unknown kind ${JSON.stringify(kind)}`);
  }
}

export async function policyFromSpec(spec: string, opts: PolicySpecOptions = {}): Promise<Policy> {
  const p = parsePolicySpec(spec);
  const file = (f: string) => resolve(opts.baseDir ?? process.cwd(), f);
  switch (p.kind) {
    case "random":
      return randomPolicy(p.seed === undefined ? opts.random : { ...opts.random, seed: p.seed });
    case "scripted":
      return scriptedPolicy(file(p.file), opts.scripted);
    case "module":
      return modulePolicy(file(p.file), opts.module);
    case "http":
      return httpPolicy(p.url, opts.http);
    case "http-batch":
      return (opts.batcher ?? new PolicyBatcher()).policy(p.url, opts.http);
    case "llm":
      return llmPolicy({ ...opts.llm, model: p.model, endpoint: p.endpoint });
    case "human":
      if (!opts.human) throw new PolicyError("bad_spec", "policy human: this host relays no operators (run it on a farm worker, with the scheduler's operator page)");
      return humanPolicy(opts.human);
  }
}
