/**
 * TypeScript shapes of the android_env a11y messages as @grpc/proto-loader hands them over with
 * LOADER_OPTIONS (snake_case names, enums and 64-bit integers as numbers). Outgoing messages may
 * leave any field out (proto3 defaults).
 */

export interface ProtoRectMsg {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

export interface AccessibilityActionMsg {
  id: number;
  label?: string;
}

export interface ClickableSpanMsg {
  text?: string;
  url?: string;
  source?: number;
  start?: number;
  node_id?: number;
}

export interface AccessibilityNodeMsg {
  unique_id: number;
  bounds_in_screen: ProtoRectMsg;
  class_name: string;
  content_description: string;
  hint_text: string;
  package_name: string;
  text: string;
  text_selection_start: number;
  text_selection_end: number;
  view_id_resource_name: string;
  window_id: number;
  is_checkable: boolean;
  is_checked: boolean;
  is_clickable: boolean;
  is_editable: boolean;
  is_enabled: boolean;
  is_focusable: boolean;
  is_focused: boolean;
  is_long_clickable: boolean;
  is_password: boolean;
  is_scrollable: boolean;
  is_selected: boolean;
  is_visible_to_user: boolean;
  actions: AccessibilityActionMsg[];
  child_ids: number[];
  clickable_spans: ClickableSpanMsg[];
  depth: number;
  labeled_by_id: number;
  label_for_id: number;
  drawing_order: number;
  tooltip_text: string;
}

export interface AccessibilityTreeMsg {
  nodes: AccessibilityNodeMsg[];
}

export interface AccessibilityWindowMsg {
  bounds_in_screen: ProtoRectMsg;
  display_id: number;
  id: number;
  layer: number;
  title: string;
  window_type: number;
  is_accessibility_focused: boolean;
  is_active: boolean;
  is_focused: boolean;
  is_in_picture_in_picture_mode: boolean;
  tree: AccessibilityTreeMsg;
}

export interface AccessibilityForestMsg {
  windows: AccessibilityWindowMsg[];
}

export interface EventRequestMsg {
  /** The event as the forwarder writes it: field name → value, all strings. */
  event: Record<string, string>;
}

/** What the device sends on `Bidi`: exactly one of `event` or `forest` (`payload` names which, on receipt). */
export interface ClientToServerMsg {
  payload?: "event" | "forest";
  event?: EventRequestMsg;
  forest?: AccessibilityForestMsg;
}

/** What the host sends on `Bidi`: today only a request for the forest. */
export interface ServerToClientMsg {
  payload?: "get_forest";
  get_forest?: Record<string, never>;
}

export interface ErrorResponseMsg {
  error: string;
}

/** AndroidAccessibilityWindowInfo.WindowType. */
export const WindowType = {
  UNKNOWN_TYPE: 0,
  TYPE_APPLICATION: 1,
  TYPE_INPUT_METHOD: 2,
  TYPE_SYSTEM: 3,
  TYPE_ACCESSIBILITY_OVERLAY: 4,
  TYPE_SPLIT_SCREEN_DIVIDER: 5,
  TYPE_MAGNIFICATION_OVERLAY: 6,
  TYPE_WINDOW_CONTROL: 7,
} as const;

/** AndroidAccessibilityNodeInfoClickableSpan.SpanSource. */
export const SpanSource = { UNKNOWN_TYPE: 0, TEXT: 1, CONTENT_DESCRIPTION: 2 } as const;
