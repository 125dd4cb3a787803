/**
 * The screen as an agent sees it: the element list derived from the accessibility tree (visible nodes that can
 * be acted on or carry text, windows in the forest's order, nodes in pre-order; `index` is the position), and the
 * tree in a compact, versioned JSON form for the record.
 */
import type { A11yNodeInfo, Device, ScreenTree, ScreenTreeFailure } from "@farm/adb";
import { coerceError } from "@farm/errors";
import type { UiElement } from "@farm/policy";

/** Version of `compactTree`'s form; bump on any change of its layout. */
export const A11Y_TREE_VERSION = 1;

/** Columns of one node row in `compactTree` (the form's header names them, so a reader needs no copy of this list). */
export const A11Y_TREE_COLUMNS = ["id", "depth", "class", "text", "desc", "hint", "resource_id", "package", "left", "top", "right", "bottom", "flags", "children"] as const;

/** Bits of the `flags` column. */
export const A11Y_FLAGS = { clickable: 1, long_clickable: 2, editable: 4, scrollable: 8, checkable: 16, checked: 32, focused: 64, enabled: 128, selected: 256, visible: 512, focusable: 1024, password: 2048 } as const;

function flagsOf(n: A11yNodeInfo): number {
  const f = A11Y_FLAGS;
  return (
    (n.isClickable ? f.clickable : 0) | (n.isLongClickable ? f.long_clickable : 0) | (n.isEditable ? f.editable : 0) | (n.isScrollable ? f.scrollable : 0) |
    (n.isCheckable ? f.checkable : 0) | (n.isChecked ? f.checked : 0) | (n.isFocused ? f.focused : 0) | (n.isEnabled ? f.enabled : 0) |
    (n.isSelected ? f.selected : 0) | (n.isVisibleToUser ? f.visible : 0) | (n.isFocusable ? f.focusable : 0) | (n.isPassword ? f.password : 0)
  );
}

/** The tree as compact JSON: `{"v":1,"source","rotation","columns":[…],"windows":[{id,type,layer,title,active,focused,bounds,nodes:[[…],…]}]}`. */
export function compactTree(tree: ScreenTree): string {
  return JSON.stringify({
    v: A11Y_TREE_VERSION,
    source: tree.source,
    rotation: tree.rotation ?? null,
    columns: A11Y_TREE_COLUMNS,
    windows: tree.windows.map((w) => ({
      id: w.id,
      type: w.windowType,
      layer: w.layer,
      title: w.title,
      active: w.isActive,
      focused: w.isFocused,
      bounds: [w.boundsInScreen.left, w.boundsInScreen.top, w.boundsInScreen.right, w.boundsInScreen.bottom],
      nodes: w.tree.nodes.map((n) => [
        n.uniqueId, n.depth, n.className, n.text, n.contentDescription, n.hintText, n.viewIdResourceName, n.packageName,
        n.boundsInScreen.left, n.boundsInScreen.top, n.boundsInScreen.right, n.boundsInScreen.bottom, flagsOf(n), n.childIds,
      ]),
    })),
  });
}

function isElement(n: A11yNodeInfo): boolean {
  const b = n.boundsInScreen;
  if (!n.isVisibleToUser || b.right <= b.left || b.bottom <= b.top) return false;
  const actionable = n.isClickable || n.isLongClickable || n.isEditable || n.isScrollable || n.isCheckable;
  return actionable || n.text.trim() !== "" || n.contentDescription.trim() !== "";
}

/** The element list an agent is shown and its actions' `index` points into. */
export function elementsOf(tree: ScreenTree): UiElement[] {
  const out: UiElement[] = [];
  for (const w of tree.windows) {
    for (const n of w.tree.nodes) {
      if (!isElement(n)) continue;
      const b = n.boundsInScreen;
      out.push({
        index: out.length,
        class_name: n.className,
        text: n.text,
        content_description: n.contentDescription,
        hint_text: n.hintText,
        resource_id: n.viewIdResourceName,
        package_name: n.packageName,
        bounds: [b.left, b.top, b.right, b.bottom],
        is_clickable: n.isClickable,
        is_long_clickable: n.isLongClickable,
        is_editable: n.isEditable,
        is_scrollable: n.isScrollable,
        is_checkable: n.isCheckable,
        is_checked: n.isChecked,
        is_focused: n.isFocused,
        is_enabled: n.isEnabled,
        is_selected: n.isSelected,
      });
    }
  }
  return out;
}

/** The device's tree within `timeoutMs`; a driver without trees or a throw comes back as a failure. Never throws. */
export async function readTree(device: Device, timeoutMs: number): Promise<ScreenTree | ScreenTreeFailure> {
  const fail = (message: string): ScreenTreeFailure => ({ status: "failed_precondition", message, output: "", durationMs: 0, outcome: "failed", source: "uiautomator" });
  if (!device.screenTree) return fail("this device driver cannot read the screen as a tree");
  try {
    return await device.screenTree({ timeoutMs });
  } catch (e) {
    return fail(`screen tree: ${coerceError(e).message}`);
  }
}
