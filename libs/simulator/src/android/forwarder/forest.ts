/**
 * The device's accessibility model in AndroidEnv's messages: a screen as an
 * AndroidAccessibilityForest, an event as the string map the forwarder app sends (the keys and the
 * rules for leaving one out are those of the app's logExtrasForEvent).
 */
import { WindowType, type AccessibilityForestMsg, type AccessibilityNodeMsg, type AccessibilityWindowMsg } from "@farm/a11y-grpc";
import type { A11yEvent, A11yNode, A11yScreen, A11yWindow } from "../system/accessibility.ts";

export function forestOf(screen: A11yScreen): AccessibilityForestMsg {
  return { windows: screen.windows.map(windowOf) };
}

function windowOf(w: A11yWindow): AccessibilityWindowMsg {
  return {
    bounds_in_screen: { ...w.bounds },
    display_id: 0,
    id: w.id,
    layer: w.layer,
    title: w.title,
    window_type: w.type >= WindowType.UNKNOWN_TYPE && w.type <= WindowType.TYPE_WINDOW_CONTROL ? w.type : WindowType.UNKNOWN_TYPE,
    is_accessibility_focused: false,
    is_active: w.active,
    is_focused: w.focused,
    is_in_picture_in_picture_mode: false,
    tree: { nodes: w.nodes.map(nodeOf) },
  };
}

function nodeOf(n: A11yNode): AccessibilityNodeMsg {
  return {
    unique_id: n.uniqueId,
    bounds_in_screen: { ...n.bounds },
    class_name: n.className,
    content_description: n.contentDescription,
    hint_text: n.hintText,
    package_name: n.packageName,
    text: n.text,
    text_selection_start: n.textSelectionStart,
    text_selection_end: n.textSelectionEnd,
    view_id_resource_name: n.resourceId,
    window_id: n.windowId,
    is_checkable: n.checkable,
    is_checked: n.checked,
    is_clickable: n.clickable,
    is_editable: n.editable,
    is_enabled: n.enabled,
    is_focusable: n.focusable,
    is_focused: n.focused,
    is_long_clickable: n.longClickable,
    is_password: n.password,
    is_scrollable: n.scrollable,
    is_selected: n.selected,
    is_visible_to_user: n.visibleToUser,
    actions: n.actions.map((id) => ({ id, label: "" })),
    child_ids: [...n.childIds],
    clickable_spans: [],
    depth: n.depth,
    labeled_by_id: 0,
    label_for_id: 0,
    drawing_order: n.drawingOrder,
    tooltip_text: "",
  };
}

/**
 * The event as the forwarder app writes it: only keys with something to say, `event_timestamp_ms`
 * last; `source_content_description` joins the descriptions of the source and its ancestors.
 * Undefined when nothing would be sent (the app sends nothing then either).
 */
export function eventMap(e: A11yEvent, screen: A11yScreen): Map<string, string> | undefined {
  const out = new Map<string, string>();
  const put = (k: string, v: string | undefined): void => {
    if (v) out.set(k, v);
  };
  put("source_content_description", e.source && ancestryDescription(e.source, screen));
  put("event_text", e.text.join(", "));
  put("source_text", e.source?.text);
  put("event_type", e.type);
  put("source_class_name", e.source?.className);
  put("event_package_name", e.packageName);
  put("before_text", e.beforeText);
  for (const [k, v] of [["from_index", e.fromIndex], ["added_count", e.addedCount], ["removed_count", e.removedCount]] as const) {
    if (v !== undefined && v !== -1) out.set(k, String(v));
  }
  if (e.type === "TYPE_VIEW_SCROLLED") {
    out.set("scroll_delta_x", String(e.scrollDeltaX ?? 0));
    out.set("scroll_delta_y", String(e.scrollDeltaY ?? 0));
  }
  put("view_id", e.source?.resourceId);
  if (out.size === 0) return undefined;
  out.set("event_timestamp_ms", String(Math.max(0, Math.round(e.eventTime))));
  return out;
}

/** Content descriptions from the node up to its window's root, joined with ", " (empty ones are kept out). */
function ancestryDescription(source: A11yNode, screen: A11yScreen): string {
  const window = screen.windows.find((w) => w.id === source.windowId);
  const parent = new Map<number, number>();
  for (const n of window?.nodes ?? []) for (const c of n.childIds) parent.set(c, n.uniqueId);
  const byId = new Map((window?.nodes ?? []).map((n) => [n.uniqueId, n] as const));
  const out: string[] = [];
  let cur: A11yNode | undefined = byId.get(source.uniqueId) ?? source;
  for (let hops = 0; cur && hops < 256; hops++) {
    if (cur.contentDescription) out.push(cur.contentDescription);
    const up = parent.get(cur.uniqueId);
    cur = up === undefined ? undefined : byId.get(up);
  }
  return out.join(", ");
}
