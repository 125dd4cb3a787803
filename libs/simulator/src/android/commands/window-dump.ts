/**
 * The XML `uiautomator dump` writes, from the accessibility model (system/accessibility.ts), in the shape
 * AOSP's uiautomator gives it (AccessibilityNodeInfoDumper, serialized by Android's KXmlSerializer):
 * `<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="R">`, nested `<node …>`
 * with the attributes in the dumper's order, leaves closed as ` />`, no whitespace between tags, no
 * trailing newline. Only nodes visible to the user are written (an invisible child is skipped with
 * its subtree); bounds are clipped to the display.
 */
import { FarmError } from "@farm/errors";
import type { A11yNode, A11yRect, A11yScreen, A11yWindow } from "../system/accessibility.ts";
import { WindowType } from "@farm/a11y-grpc";

export const XML_DECLARATION = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>";

/** What KXmlSerializer throws on a character XML cannot hold (NUL, a lone surrogate, U+FFFE/U+FFFF). */
export class IllegalXmlCharacter extends FarmError<"illegal_xml_character"> {
  override readonly name = "IllegalXmlCharacter";
  constructor(readonly codeUnit: number) {
    super("illegal_xml_character", `Illegal character (U+${codeUnit.toString(16)})`);
  }
}

/** Layout classes the dumper never flags as "not accessibility friendly" (NAF). */
const NAF_EXCLUDED = ["android.widget.GridView", "android.widget.GridLayout", "android.widget.ListView", "android.widget.TableLayout"];

interface TreeNode {
  node: A11yNode;
  children: TreeNode[];
}

export interface DumpOptions {
  /** `--compressed`: views not important for accessibility are left out, their children lifted. */
  compressed: boolean;
  /** The display's size as shown (rotated), for clipping bounds. */
  display: { width: number; height: number };
}

/** The active window's hierarchy (what `uiautomator dump` writes by default). */
export function dumpActiveWindow(screen: A11yScreen, opts: DumpOptions): string {
  const win = screen.windows.find((w) => w.active) ?? screen.windows.at(-1);
  const parts: string[] = [XML_DECLARATION];
  hierarchy(win, screen.rotation, opts, parts);
  return parts.join("");
}

/** Every window of the display, top first (`uiautomator dump --windows`, Android 13+). */
export function dumpAllWindows(screen: A11yScreen, opts: DumpOptions): string {
  const parts: string[] = [XML_DECLARATION, "<displays>", '<display id="0">'];
  [...screen.windows].reverse().forEach((w, i) => {
    parts.push(
      `<window index="${i}"${attr("title", w.title)} bounds="${rectString(w.bounds)}" active="${w.active}" focused="${w.focused}"`,
      ` accessibility-focused="false" id="${w.id}" layer="${w.layer}" type="${windowTypeName(w.type)}">`,
    );
    hierarchy(w, screen.rotation, opts, parts);
    parts.push("</window>");
  });
  parts.push("</display>", "</displays>");
  return parts.join("");
}

function hierarchy(win: A11yWindow | undefined, rotation: number, opts: DumpOptions, parts: string[]): void {
  const root = win ? buildTree(win.nodes, opts.compressed) : undefined;
  if (!root) {
    parts.push(`<hierarchy rotation="${rotation}" />`);
    return;
  }
  parts.push(`<hierarchy rotation="${rotation}">`);
  writeNode(root, 0, opts.display, parts);
  parts.push("</hierarchy>");
}

/** AccessibilityWindowInfo.typeToString: the constant's name, `<UNKNOWN>` for a type it has none for. */
function windowTypeName(type: number): string {
  const name = Object.keys(WindowType).find((k) => WindowType[k as keyof typeof WindowType] === type);
  return type > 0 && name ? name : "<UNKNOWN>";
}

/** Rebuilds the tree from the pre-order list; compressed drops unimportant nodes (the root stays). */
function buildTree(nodes: readonly A11yNode[], compressed: boolean): TreeNode | undefined {
  const byId = new Map(nodes.map((n) => [n.uniqueId, n]));
  const make = (n: A11yNode, depth: number): TreeNode[] => {
    // The model's depth is bounded by the app's own tree; this guard only keeps a cycle from looping.
    if (depth > nodes.length) return [];
    const kids = n.childIds.flatMap((id) => {
      const c = byId.get(id);
      return c ? make(c, depth + 1) : [];
    });
    if (compressed && depth > 0 && !importantForAccessibility(n)) return kids;
    return [{ node: n, children: kids }];
  };
  const root = nodes[0];
  return root ? make(root, 0)[0] : undefined;
}

/** Android's "important for accessibility" (auto mode): actionable, or carrying text or a description. */
function importantForAccessibility(n: A11yNode): boolean {
  return n.clickable || n.longClickable || n.focusable || n.scrollable || n.checkable || n.editable || n.text !== "" || n.contentDescription !== "" || n.hintText !== "";
}

function writeNode(t: TreeNode, index: number, display: { width: number; height: number }, parts: string[]): void {
  const n = t.node;
  const naf = !NAF_EXCLUDED.some((c) => n.className.endsWith(c)) && !nafCheck(t);
  parts.push(
    "<node",
    naf ? ' NAF="true"' : "",
    ` index="${index}"`,
    attr("text", n.text),
    attr("resource-id", n.resourceId),
    attr("class", n.className),
    attr("package", n.packageName),
    attr("content-desc", n.contentDescription),
    ` checkable="${n.checkable}" checked="${n.checked}" clickable="${n.clickable}" enabled="${n.enabled}"`,
    ` focusable="${n.focusable}" focused="${n.focused}" scrollable="${n.scrollable}" long-clickable="${n.longClickable}"`,
    ` password="${n.password}" selected="${n.selected}" bounds="${rectString(clip(n.bounds, display))}"`,
  );
  const visible = t.children.map((c, i) => [c, i] as const).filter(([c]) => c.node.visibleToUser);
  if (visible.length === 0) {
    parts.push(" />");
    return;
  }
  parts.push(">");
  for (const [c, i] of visible) writeNode(c, i, display, parts);
  parts.push("</node>");
}

/** False when the node is clickable and enabled with no text or description, and no descendant has one. */
function nafCheck(t: TreeNode): boolean {
  const n = t.node;
  if (!(n.clickable && n.enabled && n.text === "" && n.contentDescription === "")) return true;
  const labelled = (x: TreeNode): boolean => x.children.some((c) => c.node.text !== "" || c.node.contentDescription !== "" || labelled(c));
  return labelled(t);
}

function clip(b: A11yRect, d: { width: number; height: number }): A11yRect {
  const cl = (v: number, max: number): number => Math.min(max, Math.max(0, v));
  return { left: cl(b.left, d.width), top: cl(b.top, d.height), right: cl(b.right, d.width), bottom: cl(b.bottom, d.height) };
}

function rectString(b: A11yRect): string {
  return `[${b.left},${b.top}][${b.right},${b.bottom}]`;
}

/**
 * ` name="value"` as the dumper and KXmlSerializer write it: the dumper turns control and other
 * non-XML characters into `.`; the serializer quotes with `"` unless the value holds one (then `'`),
 * escapes `& < >` and that quote, writes tab, newline and CR as character references, and a
 * character outside the BMP as one numeric reference. What is left that XML cannot hold throws.
 */
export function attr(name: string, value: string): string {
  const q = value.includes('"') ? "'" : '"';
  let out = "";
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (strippedByDumper(c)) out += ".";
    else if (c === 0x9 || c === 0xa || c === 0xd) out += `&#${c};`;
    else if (c === 0x26) out += "&amp;";
    else if (c === 0x3e) out += "&gt;";
    else if (c === 0x3c) out += "&lt;";
    else if (c === q.charCodeAt(0)) out += q === '"' ? "&quot;" : "&apos;";
    else if ((c >= 0x20 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd)) out += value[i];
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < value.length && isLow(value.charCodeAt(i + 1))) {
      out += `&#${value.codePointAt(i)};`;
      i++;
    } else throw new IllegalXmlCharacter(c);
  }
  return ` ${name}=${q}${out}${q}`;
}

const isLow = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff;

function strippedByDumper(c: number): boolean {
  return (c >= 0x1 && c <= 0x8) || c === 0xb || c === 0xc || (c >= 0xe && c <= 0x1f) || (c >= 0x7f && c <= 0x84) || (c >= 0x86 && c <= 0x9f) || (c >= 0xfdd0 && c <= 0xfddf);
}
