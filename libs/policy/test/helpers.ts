/** Shared test helpers: a minimal observation and an episode context, a temp folder, PolicyError checks. */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before } from "node:test";
import { PolicyError, type EpisodeContext, type Observation } from "../src/index.ts";

export function observation(stepIndex = 0): Observation {
  return { timedeltaUs: 0, orientation: 0, extras: {}, stepIndex, screen: { width: 1080, height: 1920 } };
}

export function context(seed: number, episodeIndex = 0): EpisodeContext {
  return { seed, episodeIndex, screen: { width: 1080, height: 1920 } };
}

/** A temp folder for the calling test file: made before its tests, removed after them. */
export function useTempDir(prefix: string): { readonly dir: string; file(name: string, content: string): Promise<string> } {
  let dir = "";
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), prefix));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  return {
    get dir() {
      return dir;
    },
    /** Writes `content` to `name` in the folder; returns its path. */
    async file(name: string, content: string): Promise<string> {
      const path = join(dir, name);
      await writeFile(path, content);
      return path;
    },
  };
}

/** `p` rejects with a PolicyError of `code` whose message matches `pattern` (and, if given, whose retryable is `retryable`). */
export async function rejectsWithPolicyError(p: Promise<unknown>, code: string, pattern: RegExp, retryable?: boolean): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof PolicyError, String(e));
    assert.equal(e.code, code, e.message);
    assert.match(e.message, pattern);
    if (retryable !== undefined) assert.equal(e.retryable, retryable);
    return true;
  });
}
