/**
 * Hostile trees from a device: the uiautomator XML reader and the forest checks refuse deep nesting, huge
 * output, bad UTF-8, cut-off XML and entity tricks with a clear error (code and line:column), within bounds
 * and without hanging; a real dump still reads.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { AccessibilityForestMsg, AccessibilityNodeMsg } from "@farm/a11y-grpc";
import { XmlRefused, type TreeLimits } from "@farm/adb";
import { DEFAULT_TREE_LIMITS, parseUiautomatorXml, splitDumpOutput } from "@farm/adb/testing";
import { forestToTree } from "../src/a11y/forest.ts";

const DECL = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>";
const node = (i: number, extra = "", close = " />"): string =>
  `<node index="${i}" text="t${i}" resource-id="" class="android.widget.TextView" package="p" content-desc="" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,0][10,10]"${extra}${close}`;
const dump = (inner: string, rotation = 0): string => `${DECL}<hierarchy rotation="${rotation}">${inner}</hierarchy>`;
const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

function refused(xml: string, code: string, where: RegExp, limits: TreeLimits = DEFAULT_TREE_LIMITS): void {
  assert.throws(
    () => parseUiautomatorXml(xml, limits),
    (e: unknown) => {
      assert.ok(e instanceof XmlRefused, `XmlRefused, got ${String(e)}`);
      assert.equal(e.code, code, e.message);
      assert.match(e.message, where);
      return true;
    },
  );
}

test("a real dump reads into windows and nodes with the forest's field names", () => {
  const xml = dump(`${node(0, "", ">")}${node(0, ' NAF="true"')}${node(1).replace('text="t1"', 'text="a &amp; b &lt;c&gt; &quot;q&quot; &#128512; &#x41;"')}</node>`, 1);
  const split = splitDumpOutput(enc(`${xml}UI hierchary dumped to: /dev/tty\n`));
  assert.equal(split.kind, "xml");
  const tree = parseUiautomatorXml(split.kind === "xml" ? split.xml : "", DEFAULT_TREE_LIMITS);
  assert.equal(tree.rotation, 1);
  assert.equal(tree.nodeCount, 3);
  const [w] = tree.windows;
  assert.ok(w && w.isActive && w.isFocused);
  const [root, a, b] = w.tree.nodes;
  assert.deepEqual(root!.childIds, [a!.uniqueId, b!.uniqueId]);
  assert.equal(b!.depth, 1);
  assert.equal(b!.text, 'a & b <c> "q" 😀 A');
  assert.equal(a!.isClickable, true);
  assert.deepEqual(a!.boundsInScreen, { left: 0, top: 0, right: 10, bottom: 10 });
  assert.deepEqual(w.boundsInScreen, root!.boundsInScreen);
});

test("the tool's own failures are told apart from XML", () => {
  assert.deepEqual(splitDumpOutput(enc("ERROR: could not get idle state.\n")), { kind: "not_idle" });
  assert.equal(splitDumpOutput(enc("ERROR: null root node returned by UiTestAutomationBridge.\n")).kind, "tool_error");
  assert.equal(splitDumpOutput(enc("/system/bin/sh: uiautomator: inaccessible or not found\n")).kind, "tool_error");
  assert.equal(splitDumpOutput(enc("")).kind, "tool_error");
});

test("deep nesting is refused at the bound, without recursion", () => {
  const depth = 200_000;
  const xml = dump(node(0, "", ">").repeat(depth) + "</node>".repeat(depth));
  // 200,000 levels: a recursive reader would overflow the stack; this one stops at the bound.
  refused(xml, "too_deep", /nested deeper than 200 at line 1:\d+/);
  // Also within a custom bound.
  refused(dump(node(0, "", ">").repeat(6) + "</node>".repeat(6)), "too_deep", /deeper than 5/, { ...DEFAULT_TREE_LIMITS, maxDepth: 5 });
});

test("too many nodes are refused; so are too many attributes", () => {
  refused(dump(node(0, "", ">") + node(0).repeat(50) + "</node>"), "too_many_nodes", /more than 40 nodes/, { ...DEFAULT_TREE_LIMITS, maxNodes: 40 });
  const attrs = Array.from({ length: 70 }, (_, i) => ` a${i}="x"`).join("");
  refused(dump(node(0, attrs)), "too_large", /more than 64 attributes/);
});

test("bad UTF-8 is refused with the offset of the first bad byte", () => {
  const good = enc(dump(node(0)));
  for (const bad of [[0xff], [0xc3], [0xe2, 0x28, 0xa1], [0xed, 0xa0, 0x80], [0xc0, 0xaf]]) {
    const bytes = new Uint8Array([...good.subarray(0, 100), ...bad, ...good.subarray(100)]);
    assert.throws(() => splitDumpOutput(bytes), (e: unknown) => e instanceof XmlRefused && e.code === "bad_utf8" && /offset 100\b/.test(e.message));
  }
});

test("cut-off XML is refused as unterminated, wherever it stops", () => {
  const xml = dump(node(0, "", ">") + node(0) + "</node>");
  for (let cut = DECL.length + 1; cut < xml.length; cut += 7) {
    assert.throws(() => parseUiautomatorXml(xml.slice(0, cut), DEFAULT_TREE_LIMITS), (e: unknown) => e instanceof XmlRefused && (e.code === "unterminated" || e.code === "malformed"), `cut at ${cut}`);
  }
  refused(xml.slice(0, -"</hierarchy>".length), "unterminated", /<hierarchy> still open/);
  // Without the closing line the reader still needs the whole document.
  const split = splitDumpOutput(enc(xml.slice(0, 300)));
  assert.equal(split.kind, "xml");
});

test("DOCTYPE, entity declarations, unknown entities and other tricks are refused", () => {
  const laughs = `${DECL}<!DOCTYPE h [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><hierarchy rotation="0">${node(0).replace('text="t0"', 'text="&b;"')}</hierarchy>`;
  refused(laughs, "forbidden", /DOCTYPE/);
  refused(dump(node(0).replace('text="t0"', 'text="&xxe;"')), "forbidden", /unknown entity &xxe;/);
  refused(dump(node(0).replace('text="t0"', 'text="&#0;"')), "malformed", /not a character XML allows/);
  refused(dump(node(0).replace('text="t0"', 'text="a & b"')), "malformed", /'&' that starts no reference/);
  refused(dump(`<!-- hi -->${node(0)}`), "forbidden", /comments/);
  refused(dump(`<?php x ?>${node(0)}`), "forbidden", /processing instructions/);
  refused(dump(node(0).replace('clickable="true"', 'clickable="yes"')), "malformed", /clickable="yes" is not true\/false/);
  refused(dump(node(0).replace('bounds="[0,0][10,10]"', 'bounds="[0,0][10"')), "malformed", /bounds=.* is not \[l,t\]\[r,b\]/);
  refused(dump(node(0).replace('text="t0"', 'text="t0" text="again"')), "malformed", /given twice/);
  refused(dump(`<script/>`), "malformed", /unexpected element <script>/);
  refused(`${dump(node(0))}<hierarchy rotation="0"/>`, "malformed", /unexpected content after the document/);
  refused(dump(node(0)).replace('rotation="0"', 'rotation="9"'), "malformed", /rotation="9"/);
});

test("a huge attribute value is read in one pass (no backtracking), entities and all", () => {
  const big = "x&amp;".repeat(500_000);
  const tree = parseUiautomatorXml(dump(node(0).replace('text="t0"', `text="${big}"`)), DEFAULT_TREE_LIMITS);
  assert.equal(tree.windows[0]!.tree.nodes[0]!.text, "x&".repeat(500_000));
});

const fnode = (id: number, children: number[] = []): AccessibilityNodeMsg => ({ unique_id: id, child_ids: children, text: `n${id}` }) as AccessibilityNodeMsg;
const forest = (nodes: AccessibilityNodeMsg[]): AccessibilityForestMsg => ({ windows: [{ id: 7, is_active: true, tree: { nodes } }] }) as unknown as AccessibilityForestMsg;

test("forests: a well-formed one converts; cycles, shared children, dangling ids, depth and size are refused", () => {
  const ok = forestToTree(forest([fnode(1, [2, 3]), fnode(2), fnode(3)]), 42, DEFAULT_TREE_LIMITS);
  assert.equal(ok.nodeCount, 3);
  assert.equal(ok.bytes, 42);
  assert.deepEqual(ok.windows[0]!.tree.nodes[0]!.childIds, [2, 3]);
  const bad = (nodes: AccessibilityNodeMsg[], re: RegExp, limits = DEFAULT_TREE_LIMITS): void => {
    assert.throws(() => forestToTree(forest(nodes), 0, limits), (e: unknown) => e instanceof XmlRefused && re.test(e.message), String(re));
  };
  bad([fnode(1, [2]), fnode(2, [1])], /cycle/);
  bad([fnode(1, [1])], /own child/);
  bad([fnode(1, [3]), fnode(2, [3]), fnode(3)], /two parents/);
  bad([fnode(1, [9])], /names child 9/);
  bad([fnode(1), fnode(1)], /given to two nodes/);
  const chain = Array.from({ length: 300 }, (_, i) => fnode(i + 1, i < 299 ? [i + 2] : []));
  bad(chain, /deeper than 200/);
  bad(Array.from({ length: 50 }, (_, i) => fnode(i + 1)), /more than 10/, { ...DEFAULT_TREE_LIMITS, maxNodes: 10 });
});

test("Android 13's --windows form reads as one window per <window>, with its id, layer, type and flags", () => {
  const win = (i: number, id: number, active: boolean, inner: string): string =>
    `<window index="${i}" title="W${id}" bounds="[0,0][100,200]" active="${active}" focused="${active}" accessibility-focused="false" id="${id}" layer="${9 - i}" type="TYPE_SYSTEM"><hierarchy rotation="2">${inner}</hierarchy></window>`;
  const xml = `${DECL}<displays><display id="0">${win(0, 11, true, node(0, "", ">") + node(0) + "</node>")}${win(1, 4, false, node(0))}</display></displays>`;
  const t = parseUiautomatorXml(xml, DEFAULT_TREE_LIMITS);
  assert.equal(t.rotation, 2);
  assert.equal(t.nodeCount, 3);
  assert.deepEqual(t.windows.map((w) => [w.id, w.layer, w.windowType, w.isActive, w.title, w.tree.nodes.length]), [[11, 9, 3, true, "W11", 2], [4, 8, 3, false, "W4", 1]]);
  assert.ok(t.windows[1]!.tree.nodes.every((n) => n.windowId === 4));
  assert.deepEqual(t.windows[0]!.boundsInScreen, { left: 0, top: 0, right: 100, bottom: 200 });
});
