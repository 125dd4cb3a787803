/** Test helpers for the toolkit apps: find nodes of the accessibility snapshot, tap their centres, type on the on-screen keyboard. */
import assert from "node:assert/strict";
import type { SimAndroid } from "../src/android/index.ts";
import type { A11yNode } from "../src/android/system/accessibility.ts";
import type { ViewAction } from "../src/android/app-contract.ts";
import { installPrebuilt, newDevice, rlStartLine, sh } from "./android-helpers.ts";

export const TODO = "com.farm.simapps.todo/com.farm.simapps.todo.MainActivity";
export const SETTINGS = "com.farm.simapps.settings/com.farm.simapps.settings.MainActivity";

export async function startApp(apk: string, component: string, config = "{}", device: SimAndroid = newDevice()): Promise<SimAndroid> {
  await installPrebuilt(device, apk);
  await sh(device, rlStartLine(component, config, { forceStop: true }));
  return device;
}

/** The nodes of the top window (a dialog when one is open). */
export function top(d: SimAndroid): A11yNode[] {
  return d.system.accessibility.snapshot().windows.at(-1)!.nodes;
}

export function find(d: SimAndroid, pick: (n: A11yNode) => boolean, what: string): A11yNode {
  const n = top(d).find(pick);
  assert.ok(n, `no node ${what} on screen: ${top(d).map((x) => x.text || x.contentDescription || x.resourceId).filter(Boolean).join(" | ")}`);
  return n;
}

export const byText = (d: SimAndroid, text: string): A11yNode => find(d, (n) => n.text === text, `with text ${JSON.stringify(text)}`);
export const byDesc = (d: SimAndroid, desc: string): A11yNode => find(d, (n) => n.contentDescription === desc, `described ${JSON.stringify(desc)}`);
export const byId = (d: SimAndroid, id: string): A11yNode => find(d, (n) => n.resourceId.endsWith(`:id/${id}`), `with id ${id}`);

export function centre(n: A11yNode): [number, number] {
  return [Math.floor((n.bounds.left + n.bounds.right) / 2), Math.floor((n.bounds.top + n.bounds.bottom) / 2)];
}

export async function tapNode(d: SimAndroid, n: A11yNode): Promise<void> {
  const [x, y] = centre(n);
  await sh(d, `input tap ${x} ${y}`);
}

/** An accessibility action, as the forwarder or a driver would perform it on the node. */
export function act(d: SimAndroid, n: A11yNode, action: ViewAction, text?: string): boolean {
  const app = d.system.activities.foregroundProcess()?.app;
  assert.ok(app?.onViewAction, "an app in front that takes accessibility actions");
  return app.onViewAction(n.viewKey, action, text);
}

/** Types `text` key by key on the on-screen keyboard (space, enter by their descriptions). */
export async function typeOnKeyboard(d: SimAndroid, text: string): Promise<void> {
  for (const ch of text) await tapNode(d, ch === " " ? byDesc(d, "Space") : ch === "\n" ? byDesc(d, "Enter") : find(d, (n) => n.className.endsWith("Keyboard$Key") && n.text === ch, `key ${ch}`));
}

export function focusedField(d: SimAndroid): A11yNode | undefined {
  return top(d).find((n) => n.editable && n.focused);
}
