/**
 * The screen as one typed structure: windows → tree → nodes, with the field names of AndroidEnv's
 * accessibility forest protos (android_env/proto/a11y: AndroidAccessibilityForest, …WindowInfo,
 * …NodeInfo, ProtoRect) in camelCase, whichever source it came from.
 */
export interface ProtoRect {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/** AndroidAccessibilityAction: AccessibilityNodeInfo.ACTION_* id and its label. */
export interface A11yAction {
  id: number;
  label: string;
}

export interface A11yNodeInfo {
  uniqueId: number;
  boundsInScreen: ProtoRect;
  className: string;
  contentDescription: string;
  hintText: string;
  packageName: string;
  text: string;
  textSelectionStart: number;
  textSelectionEnd: number;
  viewIdResourceName: string;
  windowId: number;
  isCheckable: boolean;
  isChecked: boolean;
  isClickable: boolean;
  isEditable: boolean;
  isEnabled: boolean;
  isFocusable: boolean;
  isFocused: boolean;
  isLongClickable: boolean;
  isPassword: boolean;
  isScrollable: boolean;
  isSelected: boolean;
  isVisibleToUser: boolean;
  actions: A11yAction[];
  /** Children's uniqueIds, in order. */
  childIds: number[];
  depth: number;
  drawingOrder: number;
}

export interface A11yWindowInfo {
  boundsInScreen: ProtoRect;
  displayId: number;
  id: number;
  layer: number;
  title: string;
  windowType: number;
  isAccessibilityFocused: boolean;
  isActive: boolean;
  isFocused: boolean;
  isInPictureInPictureMode: boolean;
  /** Nodes in pre-order: the root first, each node before its children. */
  tree: { nodes: A11yNodeInfo[] };
}

export type ScreenTreeSourceName = "uiautomator" | "forwarder";

export interface ScreenTree {
  source: ScreenTreeSourceName;
  /** Display rotation 0–3 when the source says it (uiautomator does; a forest does not). */
  rotation?: number;
  windows: A11yWindowInfo[];
  /** Nodes over all windows. */
  nodeCount: number;
  /** Bytes read from the device. */
  bytes: number;
  durationMs: number;
}

/**
 * Why a read failed, for callers and metrics (a closed set): the screen did not settle (`not_idle`), the
 * device's answer broke a bound or was not a tree (`refused`), no answer in time, the transport failed, or
 * the device said something else went wrong (`failed`).
 */
export type ScreenTreeOutcome = "ok" | "not_idle" | "refused" | "timeout" | "adb_error" | "failed";

/** A failed read, shaped as the driver's StepResult (its statuses, a message saying what and where). */
export interface ScreenTreeFailure {
  status: "adb_error" | "timeout" | "failed_precondition" | "internal_error" | "unknown_command";
  message: string;
  output: string;
  durationMs: number;
  outcome: Exclude<ScreenTreeOutcome, "ok">;
  source: ScreenTreeSourceName;
}

/** One tree read, for metrics (`events.onScreenTree`): bounded labels `source` × `outcome`. */
export interface ScreenTreeEvent {
  serial: string;
  source: ScreenTreeSourceName;
  outcome: ScreenTreeOutcome;
  durationMs: number;
  nodes: number;
  bytes: number;
}

/** Bounds on what the farm accepts from a device as one tree. */
export interface TreeLimits {
  /** Bytes of the device's answer. Default 8 MiB (a busy real screen dumps 50–300 KB). */
  maxBytes: number;
  /** Nodes over all windows. Default 20000. */
  maxNodes: number;
  /** Nesting of nodes. Default 200 (Android's own view trees stay far below). */
  maxDepth: number;
}

export const DEFAULT_TREE_LIMITS: TreeLimits = { maxBytes: 8 * 1024 * 1024, maxNodes: 20_000, maxDepth: 200 };

export function isScreenTree(v: ScreenTree | ScreenTreeFailure): v is ScreenTree {
  return "windows" in v;
}
