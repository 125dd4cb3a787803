/**
 * The scripted policy: plays a fixed list of actions from a file (see script-file.ts for the formats).
 *
 * At the end of the list (`atEnd`, default "lift"):
 *   - "lift": returns LIFT from then on — never touches the screen again, so a finished script is
 *     inert and the episode ends by the task's own limits;
 *   - "loop": starts over from the first action.
 * Precedence: the `atEnd` option, then the file's own `atEnd` (object form), then "lift".
 * Every `reset` restarts from the first action, so each episode replays the same list.
 * A script may hold UI actions (AndroidWorld's JSON actions); when one points at an element by `index`, the policy
 * asks for the element list (`needsElements`), so the screen is read as a tree every step.
 */
import { basename } from "node:path";
import { lift } from "./action.ts";
import { PolicyError } from "./errors.ts";
import { readScript, type ScriptAction, type ScriptEnd } from "./script-file.ts";
import type { Policy } from "./types.ts";

export type { ScriptAction, ScriptEnd };

export interface ScriptedPolicyOptions {
  atEnd?: ScriptEnd;
}

export async function scriptedPolicy(file: string, opts: ScriptedPolicyOptions = {}): Promise<Policy<ScriptAction>> {
  const script = await readScript(file);
  const atEnd: ScriptEnd = opts.atEnd ?? script.atEnd ?? "lift";
  const actions = script.actions;
  let next = 0;
  let closed = false;

  return {
    name: `scripted:${basename(file)}`,
    version: script.version,
    needsPixels: false,
    needsElements: actions.some((a) => "action_type" in a && a.index !== undefined),
    async reset() {
      next = 0;
    },
    async act() {
      if (closed) throw new PolicyError("closed", `scripted policy ${file}: act() after close()`);
      if (next >= actions.length) {
        if (atEnd === "lift") return lift();
        next = 0;
      }
      const a = actions[next++]!;
      // A copy, so a caller mutating the action cannot change the script.
      if ("action_type" in a) return { ...a };
      return { actionType: a.actionType, touchPosition: [a.touchPosition[0], a.touchPosition[1]] };
    },
    async close() {
      closed = true;
    },
  };
}
