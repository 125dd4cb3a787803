/**
 * Reading a scripted policy's file. Three forms:
 *   - JSONL: one action per line; blank lines and lines starting with `//` are skipped.
 *   - JSON array: `[{"actionType":"TOUCH","touchPosition":[0.5,0.5]}, {"actionType":"LIFT"}]`
 *   - JSON object: `{"atEnd": "loop" | "lift", "actions": [...]}` — lets the file choose its end behaviour.
 * `.jsonl` files are JSONL, `.json` files JSON; any other name is JSON when the whole file parses as
 * an array or an object with `actions`, else JSONL.
 * Each action is AndroidEnv's (`{"actionType": …}`) or a GUI agent's UI action, AndroidWorld's JSON action
 * (`{"action_type": "click", "index": 3}`, ui-action.ts), checked as a policy's answer is.
 * Errors name the place: `file:line` for JSONL, `file: actions[i]` for JSON.
 */
import { readFile } from "node:fs/promises";
import { extname } from "node:path";
import { parseAction } from "./action.ts";
import { contentVersion } from "./content-hash.ts";
import { PolicyError } from "./errors.ts";
import type { Action } from "./types.ts";
import { looksLikeUiAction, parseUiAction, type UiAction } from "./ui-action.ts";
import { coerceError } from "@farm/errors";

export type ScriptEnd = "loop" | "lift";

export type ScriptAction = Action | UiAction;

export interface Script {
  actions: ScriptAction[];
  /** Set only when the file says so (object form). */
  atEnd?: ScriptEnd;
  version: string;
}

function bad(message: string, cause?: unknown): PolicyError {
  return new PolicyError("bad_script", message, { cause });
}

export async function readScript(file: string): Promise<Script> {
  let content: string;
  try {
    content = await readFile(file, "utf8");
  } catch (e) {
    throw bad(`scripted policy: cannot read ${file}: ${coerceError(e).message}`, e);
  }
  const version = contentVersion(content);
  const script = isJsonForm(file, content) ? parseJson(file, content) : parseJsonl(file, content);
  if (script.actions.length === 0) throw bad(`scripted policy: ${file} holds no actions; add at least one, e.g. {"actionType":"TOUCH","touchPosition":[0.5,0.5]}`);
  return { ...script, version };
}

function isJsonForm(file: string, content: string): boolean {
  const ext = extname(file).toLowerCase();
  if (ext === ".jsonl") return false;
  if (ext === ".json") return true;
  try {
    const doc: unknown = JSON.parse(content);
    return Array.isArray(doc) || (typeof doc === "object" && doc !== null && "actions" in doc);
  } catch {
    return false;
  }
}

function parseJsonl(file: string, content: string): Omit<Script, "version"> {
  const actions: ScriptAction[] = [];
  const lines = content.split(/\r?\n/);
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("//")) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (e) {
      throw bad(`${file}:${i + 1}: not valid JSON (${coerceError(e).message}); each line must be one action object`, e);
    }
    actions.push(parseScriptAction(value, `${file}:${i + 1}`));
  });
  return { actions };
}

function parseJson(file: string, content: string): Omit<Script, "version"> {
  let doc: unknown;
  try {
    doc = JSON.parse(content);
  } catch (e) {
    throw bad(`${file}: not valid JSON (${coerceError(e).message}); use an array of actions, {"actions": [...]}, or one action per line in a .jsonl file`, e);
  }
  let list: unknown = doc;
  let atEnd: ScriptEnd | undefined;
  if (typeof doc === "object" && doc !== null && !Array.isArray(doc)) {
    const obj = doc as Record<string, unknown>;
    list = obj.actions;
    if (obj.atEnd !== undefined) {
      if (obj.atEnd !== "loop" && obj.atEnd !== "lift") throw bad(`${file}: atEnd must be "loop" or "lift", got ${JSON.stringify(obj.atEnd)}`);
      atEnd = obj.atEnd;
    }
  }
  if (!Array.isArray(list)) throw bad(`${file}: expected an array of actions or {"actions": [...]}`);
  const actions = list.map((value, i) => parseScriptAction(value, `${file}: actions[${i}]`));
  return atEnd === undefined ? { actions } : { actions, atEnd };
}

/** One action of a script: a UI action when it carries `action_type`, else AndroidEnv's; `where` prefixes the error. */
function parseScriptAction(value: unknown, where: string): ScriptAction {
  if (looksLikeUiAction(value)) {
    const ui = parseUiAction(value);
    if ("invalid" in ui) throw bad(`${where}: UI action: ${ui.invalid}`);
    return ui;
  }
  try {
    return parseAction(value);
  } catch (e) {
    throw bad(`${where}: ${coerceError(e).message}`, e);
  }
}
