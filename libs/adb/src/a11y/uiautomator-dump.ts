/**
 * `uiautomator dump` output → ScreenTree. Takes what `adb exec-out uiautomator dump /dev/tty` returns:
 * the XML (one `<hierarchy>`, or Android 13's `--windows` form `<displays><display><window>…`) followed
 * by `UI hierchary dumped to: /dev/tty`, or the tool's error line. Everything is bounded by TreeLimits.
 */
import type { A11yNodeInfo, A11yWindowInfo, ProtoRect, ScreenTree, TreeLimits } from "./types.ts";
import { WindowType } from "@farm/a11y-grpc";
import { decodeUtf8, readXml, XmlRefused } from "./xml.ts";

export const NOT_IDLE = "ERROR: could not get idle state.";
/** The tool's closing line (older builds misspell it; Android 15+ spells it right). */
const DUMPED = /UI hier(?:chary|archy) dumped to: [^\n]*\n?$/;
const BOUNDS = /^\[(-?\d{1,6}),(-?\d{1,6})\]\[(-?\d{1,6}),(-?\d{1,6})\]$/;

/** What came back, before parsing: the dump's XML, or the tool's own failure line. */
export type DumpText = { kind: "xml"; xml: string } | { kind: "not_idle" } | { kind: "tool_error"; message: string };

/** Splits the tool's output: the XML before the closing line, or its error (`ERROR: …`). */
export function splitDumpOutput(bytes: Uint8Array): DumpText {
  const text = decodeUtf8(bytes);
  if (text.includes(NOT_IDLE)) return { kind: "not_idle" };
  const m = DUMPED.exec(text);
  if (!m) {
    const err = /^(?:ERROR: .*|java\.lang\.\S+: .*|.*inaccessible or not found.*)$/m.exec(text);
    if (err) return { kind: "tool_error", message: err[0].slice(0, 300) };
    if (!text.includes("<")) return { kind: "tool_error", message: `no XML and no 'dumped to' line in ${bytes.length} bytes: ${JSON.stringify(text.slice(0, 200))}` };
    // No closing line: parse what there is; a cut-off document is refused by the reader.
    return { kind: "xml", xml: text };
  }
  return { kind: "xml", xml: text.slice(0, m.index) };
}

interface Building {
  windows: A11yWindowInfo[];
  /** The window being filled (the `--windows` form opens one per <window>; the plain form one for the hierarchy). */
  current?: A11yWindowInfo;
  /** Open nodes: each with the count of children seen so far. */
  path: A11yNodeInfo[];
  nextId: number;
  rotation?: number;
  /** The plain form: one <hierarchy>, no <window> around it. */
  plain: boolean;
}

/** Parses the XML of a dump; throws XmlRefused (with line:column) for anything outside the bounds or the shape. */
export function parseUiautomatorXml(xml: string, limits: TreeLimits): Omit<ScreenTree, "bytes" | "durationMs"> {
  const b: Building = { windows: [], path: [], nextId: 1, plain: false };
  let nodes = 0;
  readXml(xml, { maxDepth: limits.maxDepth + 4, maxElements: limits.maxNodes + 1000, maxAttributes: 64 }, {
    open(name, attrs, _depth, at) {
      if (name === "node") {
        if (!b.current) throw new XmlRefused("malformed", `<node> outside a <hierarchy> at ${at()}`);
        if (++nodes > limits.maxNodes) throw new XmlRefused("too_many_nodes", `more than ${limits.maxNodes} nodes at ${at()}`);
        if (b.path.length + 1 > limits.maxDepth) throw new XmlRefused("too_deep", `nodes nested deeper than ${limits.maxDepth} at ${at()}`);
        const node = toNode(attrs, b.nextId++, b.path.length, b.current, at);
        b.path.at(-1)?.childIds.push(node.uniqueId);
        b.current.tree.nodes.push(node);
        b.path.push(node);
      } else if (name === "hierarchy") {
        const r = attrs.get("rotation");
        if (r !== undefined) b.rotation = intAttr("rotation", r, at, 0, 3);
        if (!b.current) {
          b.current = newWindow(b.windows.length, { isActive: true, isFocused: true });
          b.plain = true;
        } else if (b.current.tree.nodes.length > 0) throw new XmlRefused("malformed", `a second <hierarchy> in one window at ${at()}`);
      } else if (name === "window") {
        b.current = newWindow(b.windows.length, {
          id: intAttr("id", attrs.get("id") ?? "0", at),
          layer: intAttr("layer", attrs.get("layer") ?? "0", at),
          title: attrs.get("title") ?? "",
          windowType: typeNumber(attrs.get("type")),
          isActive: attrs.get("active") === "true",
          isFocused: attrs.get("focused") === "true",
          isAccessibilityFocused: attrs.get("accessibility-focused") === "true",
          ...(attrs.has("bounds") ? { boundsInScreen: rect(attrs.get("bounds")!, at) } : {}),
        });
      } else if (name !== "displays" && name !== "display") {
        throw new XmlRefused("malformed", `unexpected element <${name}> at ${at()}`);
      }
    },
    close(name) {
      if (name === "node") b.path.pop();
      else if (b.current && (name === "window" || (name === "hierarchy" && b.plain))) finishWindow(b);
    },
  });
  return { source: "uiautomator", ...(b.rotation !== undefined ? { rotation: b.rotation } : {}), windows: b.windows, nodeCount: nodes };
}

function newWindow(index: number, over: Partial<A11yWindowInfo>): A11yWindowInfo {
  return {
    boundsInScreen: { left: 0, top: 0, right: 0, bottom: 0 },
    displayId: 0,
    id: 0,
    layer: index,
    title: "",
    windowType: WindowType.TYPE_APPLICATION,
    isAccessibilityFocused: false,
    isActive: false,
    isFocused: false,
    isInPictureInPictureMode: false,
    tree: { nodes: [] },
    ...over,
  };
}

function finishWindow(b: Building): void {
  const w = b.current!;
  const root = w.tree.nodes[0];
  // The plain form names no window: it is the active one, as large as its root.
  if (b.plain && root) w.boundsInScreen = { ...root.boundsInScreen };
  b.plain = false;
  for (const n of w.tree.nodes) n.windowId = w.id;
  if (w.tree.nodes.length > 0 || w.title !== "") b.windows.push(w);
  b.current = undefined;
}

function typeNumber(name: string | undefined): number {
  return name !== undefined && Object.hasOwn(WindowType, name) ? WindowType[name as keyof typeof WindowType] : WindowType.UNKNOWN_TYPE;
}

/** Widgets that take typed text (EditText and its subclasses in the framework and AndroidX). */
const EDITABLE_CLASS = /(?:^|[.$])(?:\w*EditText|AutoCompleteTextView|MultiAutoCompleteTextView|SearchAutoComplete)$/;

function toNode(a: Map<string, string>, uniqueId: number, depth: number, w: A11yWindowInfo, at: () => string): A11yNodeInfo {
  const flag = (name: string): boolean => {
    const v = a.get(name);
    if (v === undefined || v === "false") return false;
    if (v === "true") return true;
    throw new XmlRefused("malformed", `${name}="${v.slice(0, 20)}" is not true/false at ${at()}`);
  };
  return {
    uniqueId,
    boundsInScreen: a.has("bounds") ? rect(a.get("bounds")!, at) : { left: 0, top: 0, right: 0, bottom: 0 },
    className: a.get("class") ?? "",
    contentDescription: a.get("content-desc") ?? "",
    hintText: a.get("hint") ?? "",
    packageName: a.get("package") ?? "",
    text: a.get("text") ?? "",
    textSelectionStart: -1,
    textSelectionEnd: -1,
    viewIdResourceName: a.get("resource-id") ?? "",
    windowId: w.id,
    isCheckable: flag("checkable"),
    isChecked: flag("checked"),
    isClickable: flag("clickable"),
    // uiautomator has no editable attribute: a text field is known by its class, as agents reading dumps infer it.
    isEditable: EDITABLE_CLASS.test(a.get("class") ?? ""),
    isEnabled: flag("enabled"),
    isFocusable: flag("focusable"),
    isFocused: flag("focused"),
    isLongClickable: flag("long-clickable"),
    isPassword: flag("password"),
    isScrollable: flag("scrollable"),
    isSelected: flag("selected"),
    // The dumper writes only nodes visible to the user.
    isVisibleToUser: true,
    actions: [],
    childIds: [],
    depth,
    drawingOrder: uniqueId,
  };
}

function rect(v: string, at: () => string): ProtoRect {
  const m = BOUNDS.exec(v);
  if (!m) throw new XmlRefused("malformed", `bounds="${v.slice(0, 40)}" is not [l,t][r,b] at ${at()}`);
  return { left: Number(m[1]), top: Number(m[2]), right: Number(m[3]), bottom: Number(m[4]) };
}

function intAttr(name: string, v: string, at: () => string, min = -(2 ** 31), max = 2 ** 31 - 1): number {
  const n = /^-?\d{1,10}$/.test(v) ? Number(v) : NaN;
  if (!(n >= min && n <= max)) throw new XmlRefused("malformed", `${name}="${v.slice(0, 20)}" is not an integer in ${min}..${max} at ${at()}`);
  return n;
}
