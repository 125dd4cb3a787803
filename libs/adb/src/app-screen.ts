/**
 * The app-screen check (task-format.md §7.4): current activity, then the view-hierarchy path over
 * `dumpsys activity <pkg> <pkg>`. The tree building and matching are pure and exported for tests.
 */
import type { PyRegex } from "@farm/task";
import type { AppScreenMatch } from "./types.ts";

export interface DumpNode {
  text: string;
  children: DumpNode[];
}

/**
 * Builds the indentation tree: each non-blank line (right-stripped of spaces and CR) is a node
 * holding the left-stripped text; with k = leading spaces / 2 (floored) its parent is
 * stack[min(k, len-1)] where stack[0] is the virtual root; the stack is cut after the parent and
 * the node pushed.
 */
export function buildDumpTree(dump: string): DumpNode {
  const root: DumpNode = { text: "", children: [] };
  const stack: DumpNode[] = [root];
  for (const raw of dump.split("\n")) {
    const line = raw.replace(/[ \r]+$/, "");
    if (line.trim() === "") continue;
    const text = line.replace(/^ +/, "");
    const k = Math.floor((line.length - text.length) / 2);
    const parentIdx = Math.min(k, stack.length - 1);
    const parent = stack[parentIdx]!;
    const node: DumpNode = { text, children: [] };
    parent.children.push(node);
    stack.length = parentIdx + 1;
    stack.push(node);
  }
  return root;
}

/** First node whose text starts with `View Hierarchy`: direct children first, then recursion into each child, depth budget 3. */
export function findViewHierarchy(node: DumpNode, depth = 3): DumpNode | undefined {
  for (const c of node.children) if (c.text.startsWith("View Hierarchy")) return c;
  if (depth <= 0) return undefined;
  for (const c of node.children) {
    const found = findViewHierarchy(c, depth - 1);
    if (found) return found;
  }
  return undefined;
}

function pyMatch(re: PyRegex, text: string): boolean {
  return re.source !== "" && re.test(text);
}

/** Matches the view-hierarchy path over `dumpsys activity <pkg> <pkg>` output (empty output → SUCCESS). */
export function matchViewHierarchy(dump: string, path: readonly PyRegex[]): AppScreenMatch {
  if (dump.trim() === "") return "SUCCESS";
  const root = buildDumpTree(dump);
  const found = findViewHierarchy(root);
  if (!found) return "UNEXPECTED_VIEW_HIERARCHY";
  let node: DumpNode = found;
  for (const re of path) {
    const next: DumpNode | undefined = node.children.find((c) => pyMatch(re, c.text));
    if (!next) return "UNEXPECTED_VIEW_HIERARCHY";
    node = next;
  }
  return "SUCCESS";
}

