/**
 * An AndroidAccessibilityForest from the forwarder → ScreenTree, checked against TreeLimits: node count,
 * child ids that name nodes of the same window, no node reachable twice (a cycle or a shared child), and
 * nesting depth measured along child ids (the message's own `depth` is not trusted).
 */
import type { AccessibilityForestMsg, AccessibilityNodeMsg, ProtoRectMsg } from "@farm/a11y-grpc";
import type { A11yNodeInfo, A11yWindowInfo, ProtoRect, ScreenTree, TreeLimits } from "./types.ts";
import { XmlRefused } from "./xml.ts";

const ZERO: ProtoRect = { left: 0, top: 0, right: 0, bottom: 0 };

export function forestToTree(forest: AccessibilityForestMsg, bytes: number, limits: TreeLimits): Omit<ScreenTree, "durationMs"> {
  const windows = forest.windows ?? [];
  const total = windows.reduce((n, w) => n + (w.tree?.nodes?.length ?? 0), 0);
  if (total > limits.maxNodes) throw new XmlRefused("too_many_nodes", `forest has ${total} nodes, more than ${limits.maxNodes}`);
  const out: A11yWindowInfo[] = windows.map((w, wi) => {
    const nodes = (w.tree?.nodes ?? []).map(toNode);
    checkShape(nodes, wi, limits.maxDepth);
    return {
      boundsInScreen: rect(w.bounds_in_screen),
      displayId: w.display_id ?? 0,
      id: w.id ?? 0,
      layer: w.layer ?? 0,
      title: w.title ?? "",
      windowType: w.window_type ?? 0,
      isAccessibilityFocused: !!w.is_accessibility_focused,
      isActive: !!w.is_active,
      isFocused: !!w.is_focused,
      isInPictureInPictureMode: !!w.is_in_picture_in_picture_mode,
      tree: { nodes },
    };
  });
  return { source: "forwarder", windows: out, nodeCount: total, bytes };
}

/** Every child id names a node of this window, each node has at most one parent, and depth stays bounded. */
function checkShape(nodes: readonly A11yNodeInfo[], window: number, maxDepth: number): void {
  const byId = new Map<number, A11yNodeInfo>();
  for (const n of nodes) {
    if (byId.has(n.uniqueId)) throw new XmlRefused("malformed", `window ${window}: unique_id ${n.uniqueId} given to two nodes`);
    byId.set(n.uniqueId, n);
  }
  const parented = new Set<number>();
  for (const n of nodes) {
    for (const c of n.childIds) {
      if (!byId.has(c)) throw new XmlRefused("malformed", `window ${window}: node ${n.uniqueId} names child ${c}, which is not in the window`);
      if (parented.has(c) || c === n.uniqueId) throw new XmlRefused("malformed", `window ${window}: node ${c} has two parents or is its own child (a cycle)`);
      parented.add(c);
    }
  }
  // Walk from the roots without recursion: depth along child ids; a cycle leaves nodes unreached (refused).
  const stack: [number, number][] = nodes.filter((n) => !parented.has(n.uniqueId)).map((n) => [n.uniqueId, 0]);
  let reached = 0;
  while (stack.length > 0) {
    const [id, depth] = stack.pop()!;
    if (depth >= maxDepth) throw new XmlRefused("too_deep", `window ${window}: nodes nested deeper than ${maxDepth}`);
    reached++;
    for (const c of byId.get(id)!.childIds) stack.push([c, depth + 1]);
  }
  if (reached !== nodes.length) throw new XmlRefused("malformed", `window ${window}: ${nodes.length - reached} nodes sit on a cycle of child ids`);
}

function toNode(n: AccessibilityNodeMsg): A11yNodeInfo {
  return {
    uniqueId: n.unique_id ?? 0,
    boundsInScreen: rect(n.bounds_in_screen),
    className: n.class_name ?? "",
    contentDescription: n.content_description ?? "",
    hintText: n.hint_text ?? "",
    packageName: n.package_name ?? "",
    text: n.text ?? "",
    textSelectionStart: n.text_selection_start ?? -1,
    textSelectionEnd: n.text_selection_end ?? -1,
    viewIdResourceName: n.view_id_resource_name ?? "",
    windowId: n.window_id ?? 0,
    isCheckable: !!n.is_checkable,
    isChecked: !!n.is_checked,
    isClickable: !!n.is_clickable,
    isEditable: !!n.is_editable,
    isEnabled: !!n.is_enabled,
    isFocusable: !!n.is_focusable,
    isFocused: !!n.is_focused,
    isLongClickable: !!n.is_long_clickable,
    isPassword: !!n.is_password,
    isScrollable: !!n.is_scrollable,
    isSelected: !!n.is_selected,
    isVisibleToUser: !!n.is_visible_to_user,
    actions: (n.actions ?? []).map((a) => ({ id: a.id ?? 0, label: a.label ?? "" })),
    childIds: [...(n.child_ids ?? [])],
    depth: n.depth ?? 0,
    drawingOrder: n.drawing_order ?? 0,
  };
}

function rect(r: ProtoRectMsg | undefined | null): ProtoRect {
  return r ? { left: r.left ?? 0, top: r.top ?? 0, right: r.right ?? 0, bottom: r.bottom ?? 0 } : { ...ZERO };
}
