/**
 * The screen-tree settings (`--trees`, FARM_TREES; the forwarder APK and its connect deadline), compiled through a
 * config module's SettingsReader: the worker's (config.ts) and `farm run`'s (the CLI's config module), which checks
 * them before it loads any device code (`@farm/worker/trees-config`). The sources themselves: a11y-trees.ts.
 */
import path from "node:path";
import type { SettingsReader } from "@farm/config";

export const TREE_SOURCES = ["auto", "uiautomator", "forwarder"] as const;
export type TreeSourceSetting = (typeof TREE_SOURCES)[number];

/** The repo's forwarder APK (`tasks/apks`), the default of `--forwarder-apk`. */
export const DEFAULT_FORWARDER_APK = path.resolve(import.meta.dirname, "../../../tasks/apks/accessibility_forwarder.apk");

export interface DeviceTreesConfig {
  trees: TreeSourceSetting;
  /** The forwarder APK installed on a device without the package (`forwarder` only). */
  forwarderApk: string;
  /** How long a device's stream may take to come after the enabling broadcasts. */
  forwarderConnectMs: number;
}

/** The flags of these settings (WorkerConfigInput's `trees`, `forwarderApk`, `forwarderConnectMs`). */
export interface TreesConfigInput {
  trees?: TreeSourceSetting;
  forwarderApk?: string;
  forwarderConnectMs?: number;
}

/** The settings from flags → environment → defaults, through the config module's reader. */
export function treesConfig(r: SettingsReader, input: TreesConfigInput): DeviceTreesConfig {
  return {
    trees: r.oneOf("trees", TREE_SOURCES, { flag: input.trees, env: "FARM_TREES", default: "uiautomator" }),
    forwarderApk: path.resolve(r.string("forwarderApk", { flag: input.forwarderApk, env: "FARM_FORWARDER_APK", default: DEFAULT_FORWARDER_APK })),
    forwarderConnectMs: r.int("forwarderConnectMs", { flag: input.forwarderConnectMs, env: "FARM_FORWARDER_CONNECT_MS", default: 5000, min: 100, max: 120_000 }),
  };
}
