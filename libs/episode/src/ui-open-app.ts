/**
 * open_app by its launcher label, as a person does it: HOME, find the icon on the home screen (the screen read as a
 * tree; its text or content description equals the label, case-insensitively), tap its centre, then ask the device
 * which package is in front. HOME and the tap may travel over gRPC while the reads go over adb, so each read is
 * retried a few times until the screen shows what the step before it did.
 */
import { isScreenTree, type A11yNodeInfo, type StepResult } from "@farm/adb";
import type { ResolvedUiAction } from "@farm/policy";
import { sleep } from "@farm/time";
import { OK, onChannel, type UiActuatorDevice } from "./ui-device-ops.ts";
import { readTree } from "./ui-elements.ts";

/** Reads of the home screen (and of the app in front) before giving up, and the pause between them. */
const READS = 4;
const READ_GAP_MS = 150;

export type OpenApp = { resolved: ResolvedUiAction; result: StepResult } | { invalid: string };

function labelled(nodes: readonly A11yNodeInfo[], label: string): A11yNodeInfo | undefined {
  const want = label.trim().toLowerCase();
  return nodes.find((n) => n.isVisibleToUser && (n.text.trim().toLowerCase() === want || n.contentDescription.trim().toLowerCase() === want) && n.boundsInScreen.right > n.boundsInScreen.left);
}

/** The icon labelled `label` on the home screen, a failed read, or undefined when no read shows one. */
async function findIcon(dev: UiActuatorDevice, label: string, signal: AbortSignal): Promise<A11yNodeInfo | StepResult | undefined> {
  let lastFailure: StepResult | undefined;
  for (let i = 0; i < READS && !signal.aborted; i++) {
    if (i > 0) await sleep(READ_GAP_MS, signal);
    const t = await readTree(dev.device, dev.adbCallTimeoutMs);
    if (!isScreenTree(t)) {
      lastFailure = t;
      if (t.outcome !== "not_idle") return t;
      continue;
    }
    lastFailure = undefined;
    const icon = labelled(t.windows.flatMap((w) => w.tree.nodes), label);
    if (icon) return icon;
  }
  return lastFailure;
}

/** The package in front once it is no longer the launcher's (undefined when the device does not say in time). */
async function packageInFront(dev: UiActuatorDevice, launcher: string, signal: AbortSignal): Promise<string | undefined> {
  for (let i = 0; i < READS && !signal.aborted; i++) {
    if (i > 0) await sleep(READ_GAP_MS, signal);
    const r = await dev.device.execute({ timeoutSec: 0, cmd: { command: "get_current_activity" } }, { timeoutMs: dev.adbCallTimeoutMs }).catch(() => undefined);
    if (r?.status !== "ok" || r.data?.kind !== "current_activity") return undefined;
    const pkg = r.data.fullActivity.split("/")[0] ?? "";
    if (pkg !== "" && pkg !== launcher) return pkg;
  }
  return undefined;
}

export async function openApp(label: string, dev: UiActuatorDevice, signal: AbortSignal): Promise<OpenApp> {
  const t0 = performance.now();
  const resolved = (extra: Partial<ResolvedUiAction> = {}): ResolvedUiAction => ({ op: "open_app", ...extra, durationMs: Math.round(performance.now() - t0) });
  const home = await onChannel(dev, "open_app: HOME", (c) => c.keyEvent("KEYCODE_HOME"));
  if (home.status !== "ok") return { resolved: resolved({ key: "KEYCODE_HOME" }), result: home };
  const icon = await findIcon(dev, label, signal);
  if (icon === undefined) {
    if (signal.aborted) return { resolved: resolved(), result: { ...OK, message: "aborted before the app was found" } };
    return { invalid: `no app labelled ${JSON.stringify(label.slice(0, 80))} on the home screen` };
  }
  if (!("boundsInScreen" in icon)) return { resolved: resolved(), result: { ...icon, message: `open_app: reading the home screen: ${icon.message}` } };
  const b = icon.boundsInScreen;
  const x = Math.trunc((b.left + b.right) / 2);
  const y = Math.trunc((b.top + b.bottom) / 2);
  const tap = await onChannel(dev, "open_app: tap", (c) => c.tap(x, y));
  if (tap.status !== "ok") return { resolved: resolved({ x, y }), result: tap };
  const app = await packageInFront(dev, icon.packageName, signal);
  return { resolved: resolved({ x, y, text: icon.text || icon.contentDescription, ...(app ? { app } : {}) }), result: OK };
}
