/**
 * The screen as accessibility sees it: every window on the display (the launcher or the app in front,
 * a dialog over it) as a flat list of nodes with the fields of Android's AccessibilityNodeInfo, in
 * display coordinates (rotated with the display). `uiautomator dump` and the accessibility forwarder
 * both read this one model, and so does hit-testing of what a tap at a point presses.
 *
 * Node ids are stable while a view lives: they are given out per view identity (window, then the chain
 * of keys from the root: ViewNode.key, else its resource id, else its child index) and forgotten once a
 * snapshot of the screen no longer holds that view.
 */
import { WindowType } from "@farm/a11y-grpc";
import type { ViewAction, ViewNode } from "../app-contract.ts";
import { displaySize, naturalToDisplay, type Rotation } from "../../graphics/orientation.ts";
import type { ActivityManager } from "./activity-manager.ts";
import { launcherTree } from "./launcher.ts";
import type { PackageManager } from "./package-manager.ts";
import { LAUNCHER_PACKAGE } from "./package-manager.ts";

export interface A11yRect {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/** AccessibilityNodeInfo.ACTION_* ids, as a forest node lists them. */
export const NODE_ACTION_IDS: Readonly<Record<ViewAction, number>> = {
  focus: 0x1,
  click: 0x10,
  long_click: 0x20,
  scroll_forward: 0x1000,
  scroll_backward: 0x2000,
  set_text: 0x200000,
};

export interface A11yNode {
  /** Stable while the view lives. */
  uniqueId: number;
  className: string;
  packageName: string;
  resourceId: string;
  text: string;
  contentDescription: string;
  hintText: string;
  bounds: A11yRect;
  clickable: boolean;
  longClickable: boolean;
  scrollable: boolean;
  checkable: boolean;
  checked: boolean;
  focusable: boolean;
  focused: boolean;
  enabled: boolean;
  selected: boolean;
  password: boolean;
  editable: boolean;
  visibleToUser: boolean;
  textSelectionStart: number;
  textSelectionEnd: number;
  /** Depth in its window's tree (root 0). */
  depth: number;
  /** Index among its parent's children. */
  index: number;
  drawingOrder: number;
  childIds: number[];
  /** NODE_ACTION_IDS of what the node offers. */
  actions: number[];
  windowId: number;
  /** What the app's onViewAction takes for this view. */
  viewKey: string;
}

export interface A11yWindow {
  id: number;
  type: number;
  layer: number;
  title: string;
  packageName: string;
  bounds: A11yRect;
  active: boolean;
  focused: boolean;
  /** Pre-order: the root first, each node before its children, children in order. */
  nodes: A11yNode[];
}

/** The AccessibilityEvent types the device emits (names as AccessibilityEvent.eventTypeToString gives them). */
export type A11yEventType =
  | "TYPE_VIEW_CLICKED"
  | "TYPE_VIEW_TEXT_CHANGED"
  | "TYPE_VIEW_SCROLLED"
  | "TYPE_WINDOW_STATE_CHANGED"
  | "TYPE_WINDOW_CONTENT_CHANGED";

/** One accessibility event, with what AccessibilityEvent and its source node carry. */
export interface A11yEvent {
  type: A11yEventType;
  packageName: string;
  /** The source view's class (a window event: the window's root class). */
  className: string;
  /** AccessibilityEvent.getText(): the source's text, or the window title. */
  text: string[];
  /** The node the event is about, as it was then (absent for window-wide events without one). */
  source?: A11yNode;
  /** Milliseconds since the device started (AccessibilityEvent.getEventTime is uptime). */
  eventTime: number;
  /** Text changes: the text before, where it changed and how many characters came and went. */
  beforeText?: string;
  fromIndex?: number;
  addedCount?: number;
  removedCount?: number;
  /** Scrolls: how far the content moved (positive: towards the end). */
  scrollDeltaX?: number;
  scrollDeltaY?: number;
}

export type A11yEventListener = (e: A11yEvent) => void;

export interface A11yScreen {
  rotation: Rotation;
  windows: A11yWindow[];
}

interface WindowSource {
  title: string;
  packageName: string;
  type: number;
  root: ViewNode;
}

export class Accessibility {
  private readonly ids = new Map<string, number>();
  private nextId = 1;
  private readonly listeners = new Set<A11yEventListener>();
  /** What the screen looked like when last checked (window set; everything), while anyone listens. */
  private seen: { windows: string; content: string } | undefined;
  private readonly startedAt: number;
  private held = 0;

  constructor(
    private readonly activities: ActivityManager,
    private readonly packages: PackageManager,
    private readonly screen: { width: number; height: number },
    private readonly rotation: () => Rotation,
    private readonly now: () => number = Date.now,
  ) {
    this.startedAt = now();
    activities.onChange(() => this.checkChanges());
  }

  /** Calls `listener` with every event from now on; returns the unsubscribe. Events cost nothing while nobody listens. */
  onEvent(listener: A11yEventListener): () => void {
    if (this.listeners.size === 0) this.seen = this.signature(this.snapshot());
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.seen = undefined;
    };
  }

  /** Whether anyone listens (callers skip the work of describing an event otherwise). */
  get listening(): boolean {
    return this.listeners.size > 0;
  }

  /** Sends an event about `source` (or about the top window when absent) to every listener. */
  emit(type: A11yEventType, source: A11yNode | undefined, extra: Partial<A11yEvent> = {}): void {
    if (!this.listening) return;
    const top = this.snapshot().windows.at(-1);
    const ev: A11yEvent = {
      type,
      packageName: source?.packageName ?? top?.packageName ?? "",
      className: source?.className ?? top?.nodes[0]?.className ?? "",
      text: source ? (source.text ? [source.text] : []) : top?.title ? [top.title] : [],
      eventTime: this.now() - this.startedAt,
      ...(source ? { source } : {}),
      ...extra,
    };
    for (const l of [...this.listeners]) l(ev);
  }

  /**
   * After anything that may have changed the screen: a new window set (or app in front) is
   * TYPE_WINDOW_STATE_CHANGED, any other change of the trees TYPE_WINDOW_CONTENT_CHANGED.
   */
  checkChanges(): void {
    if (!this.listening || !this.seen || this.held > 0) return;
    const now = this.signature(this.snapshot());
    const before = this.seen;
    this.seen = now;
    // A window state change names the activity in front, as Android's does.
    if (now.windows !== before.windows) this.emit("TYPE_WINDOW_STATE_CHANGED", undefined, { className: this.activities.currentComponent().className });
    else if (now.content !== before.content) this.emit("TYPE_WINDOW_CONTENT_CHANGED", undefined);
  }

  /**
   * The app in front changed its screen by itself (an animation's tick): a scroll it made is
   * TYPE_VIEW_SCROLLED on the scrollable node at natural point (x, y), then the change is reported as
   * checkChanges() does.
   */
  contentChanged(scrolled?: { x: number; y: number; dy: number }): void {
    if (!this.listening) return;
    if (scrolled) {
      const p = naturalToDisplay(scrolled.x, scrolled.y, this.screen.width, this.screen.height, this.rotation());
      const node = this.nodeAt(p.x, p.y, (n) => n.scrollable);
      if (node) this.emit("TYPE_VIEW_SCROLLED", node, { scrollDeltaX: 0, scrollDeltaY: Math.round(scrolled.dy) });
    }
    this.checkChanges();
  }

  /**
   * Runs `fn` (an input being delivered) without window events in between, so the event about the
   * input itself comes first, as on a device; the caller runs checkChanges() after it.
   */
  hold<T>(fn: () => T): T {
    this.held++;
    try {
      return fn();
    } finally {
      this.held--;
    }
  }

  /** The node with `uniqueId` in the top window now, if that view still lives. */
  nodeById(uniqueId: number): A11yNode | undefined {
    return this.snapshot().windows.at(-1)?.nodes.find((n) => n.uniqueId === uniqueId);
  }

  /** The focused editable node of the top window (where typed text goes), if any. */
  focusedEditable(): A11yNode | undefined {
    return this.snapshot().windows.at(-1)?.nodes.find((n) => n.focused && n.editable);
  }

  private signature(s: A11yScreen): { windows: string; content: string } {
    const front = this.activities.foregroundProcess();
    const windows = JSON.stringify([front ? front.pid : 0, s.windows.map((w) => [w.id, w.packageName, w.title, w.type])]);
    const content = JSON.stringify([s.rotation, s.windows.map((w) => w.nodes.map((n) => [n.uniqueId, n.text, n.contentDescription, n.bounds, n.checked, n.focused, n.selected, n.enabled, n.childIds]))]);
    return { windows, content };
  }

  /** The windows on screen now, bottom first; the top one is active and focused. */
  snapshot(): A11yScreen {
    const rotation = this.rotation();
    const sources = this.windowSources();
    const seen = new Set<string>();
    const windows = sources.map((src, i) => this.window(src, i, i === sources.length - 1, rotation, seen));
    for (const identity of this.ids.keys()) if (!seen.has(identity)) this.ids.delete(identity);
    return { rotation, windows };
  }

  /** The deepest enabled node at display point (x, y) of the top window that satisfies `pick`. */
  nodeAt(x: number, y: number, pick: (n: A11yNode) => boolean = (n) => n.clickable): A11yNode | undefined {
    const top = this.snapshot().windows.at(-1);
    let found: A11yNode | undefined;
    for (const n of top?.nodes ?? []) {
      const b = n.bounds;
      if (x >= b.left && x < b.right && y >= b.top && y < b.bottom && n.enabled && pick(n)) found = n;
    }
    return found;
  }

  private windowSources(): WindowSource[] {
    const proc = this.activities.foregroundProcess();
    if (!proc) {
      const root = launcherTree(this.packages, this.screen.width, this.screen.height);
      return [{ title: "Launcher", packageName: LAUNCHER_PACKAGE, type: WindowType.TYPE_APPLICATION, root }];
    }
    let root: ViewNode | undefined;
    let dialog: ViewNode | undefined;
    proc.guard(() => {
      root = proc.app.viewHierarchy();
      dialog = proc.app.dialogHierarchy?.();
    });
    const out: WindowSource[] = [];
    if (root) out.push({ title: proc.pkg.label, packageName: proc.pkg.name, type: WindowType.TYPE_APPLICATION, root });
    if (dialog) out.push({ title: proc.pkg.label, packageName: proc.pkg.name, type: WindowType.TYPE_APPLICATION, root: dialog });
    return out;
  }

  private window(src: WindowSource, layer: number, top: boolean, rotation: Rotation, seen: Set<string>): A11yWindow {
    const windowId = this.idFor(`window/${layer}/${src.packageName}/${src.type}`, seen);
    const nodes: A11yNode[] = [];
    this.flatten(src.root, `${windowId}`, 0, 0, -1, { src, windowId, rotation, seen, nodes });
    return {
      id: windowId,
      type: src.type,
      layer,
      title: src.title,
      packageName: src.packageName,
      bounds: nodes[0]?.bounds ?? this.rect([0, 0, this.screen.width, this.screen.height], rotation),
      active: top,
      focused: top,
      nodes,
    };
  }

  private flatten(
    v: ViewNode,
    parentIdentity: string,
    depth: number,
    index: number,
    parentPos: number,
    ctx: { src: WindowSource; windowId: number; rotation: Rotation; seen: Set<string>; nodes: A11yNode[] },
  ): void {
    const viewKey = v.key ?? v.id ?? "";
    const identity = `${parentIdentity}/${v.key ?? v.id ?? `#${index}`}`;
    const node = this.node(v, this.idFor(identity, ctx.seen), depth, index, viewKey, ctx);
    const pos = ctx.nodes.length;
    ctx.nodes.push(node);
    if (parentPos >= 0) ctx.nodes[parentPos]!.childIds.push(node.uniqueId);
    (v.children ?? []).forEach((c, i) => this.flatten(c, identity, depth + 1, i, pos, ctx));
  }

  private node(
    v: ViewNode,
    uniqueId: number,
    depth: number,
    index: number,
    viewKey: string,
    ctx: { src: WindowSource; windowId: number; rotation: Rotation; nodes: A11yNode[] },
  ): A11yNode {
    const text = v.text ?? "";
    const selection = v.selection ?? (v.editable ? [text.length, text.length] : [-1, -1]);
    const enabled = v.enabled ?? true;
    const actions: ViewAction[] = [];
    if (v.focusable) actions.push("focus");
    if (v.clickable) actions.push("click");
    if (v.longClickable) actions.push("long_click");
    if (v.scrollable) actions.push("scroll_forward", "scroll_backward");
    if (v.editable) actions.push("set_text");
    return {
      uniqueId,
      className: v.cls,
      packageName: ctx.src.packageName,
      resourceId: v.id ? qualifiedId(v.id, ctx.src.packageName) : "",
      text: v.password ? "•".repeat(text.length) : text,
      contentDescription: v.desc ?? "",
      hintText: v.hint ?? "",
      bounds: this.rect(v.bounds, ctx.rotation),
      clickable: !!v.clickable,
      longClickable: !!v.longClickable,
      scrollable: !!v.scrollable,
      checkable: !!v.checkable,
      checked: !!v.checked,
      focusable: !!v.focusable,
      focused: !!v.focused,
      enabled,
      selected: !!v.selected,
      password: !!v.password,
      editable: !!v.editable,
      visibleToUser: v.bounds[2] > v.bounds[0] && v.bounds[3] > v.bounds[1],
      textSelectionStart: selection[0],
      textSelectionEnd: selection[1],
      depth,
      index,
      drawingOrder: ctx.nodes.length,
      childIds: [],
      actions: enabled ? actions.map((a) => NODE_ACTION_IDS[a]) : [],
      windowId: ctx.windowId,
      viewKey,
    };
  }

  /** Natural-frame bounds [l, t, r, b) as the display shows them (the rotated box's corners). */
  private rect(b: readonly [number, number, number, number], rotation: Rotation): A11yRect {
    const { width: w, height: h } = this.screen;
    if (rotation === 0) return { left: b[0], top: b[1], right: b[2], bottom: b[3] };
    const shown = displaySize(w, h, rotation);
    // Map the display's corners back: find the display box whose natural image is b.
    const corners = [
      [b[0], b[1]],
      [b[2] - 1, b[3] - 1],
    ].map(([x, y]) => naturalToDisplay(x!, y!, w, h, rotation));
    const xs = corners.map((c) => c.x);
    const ys = corners.map((c) => c.y);
    const clamp = (v: number, max: number): number => Math.min(max, Math.max(0, v));
    return {
      left: clamp(Math.min(...xs), shown.width),
      top: clamp(Math.min(...ys), shown.height),
      right: clamp(Math.max(...xs) + 1, shown.width),
      bottom: clamp(Math.max(...ys) + 1, shown.height),
    };
  }

  private idFor(identity: string, seen: Set<string>): number {
    seen.add(identity);
    let id = this.ids.get(identity);
    if (id === undefined) {
      id = this.nextId++;
      this.ids.set(identity, id);
    }
    return id;
  }
}

/** `app:id/x` → `<package>:id/x`, as Android reports resource ids; `android:id/…` stays. */
function qualifiedId(id: string, packageName: string): string {
  return id.startsWith("app:") ? `${packageName}:${id.slice(4)}` : id;
}
