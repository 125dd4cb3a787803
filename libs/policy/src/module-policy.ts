/**
 * The module policy: a policy written as a JS/TS file, loaded with a dynamic import.
 *
 * The file exports either
 *   - `createPolicy(options)` (sync or async) returning a policy object, or
 *   - a policy object as its default export.
 * A policy object needs `act(observation, signal?)`; `reset`, `close`, `needsPixels` (default false)
 * and `name` (default `module:<file name>`) are optional. Its version is always the hash of the
 * file's content (imports of that file are not covered), so an edit shows up in trajectories.
 * Every action it returns is validated; an invalid action or a throw becomes PolicyError "bad_action".
 * TypeScript files load only when the process runs with tsx (the `farm` command and tests do).
 */
import { readFile } from "node:fs/promises";
import { basename, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe } from "./action.ts";
import { parseAnswer } from "./answer.ts";
import { contentVersion } from "./content-hash.ts";
import { PolicyError } from "./errors.ts";
import type { EpisodeContext, EpisodeEndInfo, Observation, Policy, PolicyAnswer } from "./types.ts";
import { coerceError } from "@farm/errors";

/** What a module may hand us; checked field by field before use. */
interface ModulePolicyShape {
  name?: unknown;
  needsPixels?: unknown;
  needsElements?: unknown;
  act: (observation: Observation, signal?: AbortSignal) => unknown;
  reset?: (ctx: EpisodeContext) => unknown;
  close?: () => unknown;
  endEpisode?: (end: EpisodeEndInfo) => unknown;
}

const EXPECTED = "export `createPolicy(options)` returning a policy, or a default export that is a policy object with an `act(observation)` method";

export async function modulePolicy(file: string, options: Record<string, unknown> = {}): Promise<Policy> {
  const path = resolve(file);
  let content: Buffer;
  try {
    content = await readFile(path);
  } catch (e) {
    throw new PolicyError("bad_module", `module policy: cannot read ${path}: ${coerceError(e).message}`, { cause: e });
  }
  const version = contentVersion(content);

  let mod: Record<string, unknown>;
  try {
    // The query makes an edited file load afresh instead of from the import cache.
    mod = (await import(`${pathToFileURL(path).href}?v=${version}`)) as Record<string, unknown>;
  } catch (e) {
    const hint = /\.[cm]?ts$/.test(path) && (e as { code?: string }).code === "ERR_UNKNOWN_FILE_EXTENSION"
      ? " (TypeScript needs the process to run with tsx: node --import tsx …, or the farm command)"
      : "";
    throw new PolicyError("bad_module", `module policy: importing ${path} failed: ${coerceError(e).message}${hint}`, { cause: e });
  }

  const candidate = await instantiate(path, mod, options);
  checkShape(path, candidate);
  return adapt(path, candidate, version);
}

async function instantiate(path: string, mod: Record<string, unknown>, options: Record<string, unknown>): Promise<unknown> {
  // A CommonJS module imported from ESM puts its exports under `default`.
  const def = mod.default as Record<string, unknown> | undefined;
  const factory = typeof mod.createPolicy === "function" ? mod.createPolicy : typeof def?.createPolicy === "function" ? def.createPolicy : undefined;
  if (typeof factory === "function") {
    try {
      return await factory(options);
    } catch (e) {
      throw new PolicyError("bad_module", `module policy: createPolicy() in ${path} threw: ${coerceError(e).message}`, { cause: e });
    }
  }
  if (typeof def === "function") {
    throw new PolicyError("bad_module", `module policy: ${path} has a default export that is a function; name it \`createPolicy\` or ${EXPECTED}`);
  }
  if (def !== undefined) return def;
  const names = Object.keys(mod);
  throw new PolicyError("bad_module", `module policy: ${path} exports ${names.length ? names.join(", ") : "nothing"}; ${EXPECTED}`);
}

function checkShape(path: string, p: unknown): asserts p is ModulePolicyShape {
  const fail = (what: string) => new PolicyError("bad_module", `module policy: ${path}: ${what}; ${EXPECTED}`);
  if (typeof p !== "object" || p === null) throw fail(`the policy is ${describe(p)}, not an object`);
  const o = p as Record<string, unknown>;
  if (typeof o.act !== "function") throw fail("the policy has no act() method");
  for (const m of ["reset", "close", "endEpisode"] as const) {
    if (o[m] !== undefined && typeof o[m] !== "function") throw fail(`${m} must be a method when present`);
  }
  if (o.needsPixels !== undefined && typeof o.needsPixels !== "boolean") throw fail("needsPixels must be a boolean when present");
  if (o.needsElements !== undefined && typeof o.needsElements !== "boolean") throw fail("needsElements must be a boolean when present");
  if (o.name !== undefined && typeof o.name !== "string") throw fail("name must be a string when present");
}

function adapt(path: string, p: ModulePolicyShape, version: string): Policy {
  const where = `module policy ${path}`;
  return {
    name: typeof p.name === "string" && p.name !== "" ? p.name : `module:${basename(path)}`,
    version,
    needsPixels: p.needsPixels === true,
    needsElements: p.needsElements === true,
    async reset(ctx) {
      await p.reset?.(ctx);
    },
    async act(observation, signal): Promise<PolicyAnswer> {
      let raw: unknown;
      try {
        raw = await p.act(observation, signal);
      } catch (e) {
        if (e instanceof PolicyError) throw e;
        throw new PolicyError("bad_action", `${where}: act() threw: ${coerceError(e).message}`, { cause: e });
      }
      try {
        return parseAnswer(raw);
      } catch (e) {
        throw new PolicyError("bad_action", `${where}: act() returned an invalid action: ${coerceError(e).message}`, { cause: e });
      }
    },
    async endEpisode(end) {
      await p.endEpisode?.(end);
    },
    async close() {
      await p.close?.();
    },
  };
}
