/**
 * The simulator's rooms stay acyclic: each folder under libs/simulator/src (and each file directly in it)
 * is one room, and no chain of relative imports leads from a room back to itself. The layering the
 * README states is checked by name too: android/ never imports apps/ (apps/ sits above it and android/
 * gets the app catalog handed down), graphics/ imports no other room.
 * And the test-support package @farm/local-services stays in test support: no production file under
 * libs/ * /src imports it, except a `src/testing.ts` (a package's test kit) or a file listed below with its reason.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { sourceFiles, withTree } from "./source-files.ts";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const SIM_SRC = "libs/simulator/src";

/** Rooms that must not import these others (besides being part of no cycle). */
const FORBIDDEN = new Map<string, readonly string[]>([
  ["android", ["apps"]],
  ["graphics", ["*"]],
]);

/** Production files that may still import @farm/local-services, and why. */
export const LOCAL_SERVICES_EXCEPTIONS = new Map<string, string>([]);

interface Edge { from: string; to: string; where: string }

const RELATIVE_IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)["'](\.[^"']+)["']/gm;
const lineOf = (text: string, index: number): number => text.slice(0, index).split("\n").length;
const rel = (root: string, file: string): string => path.relative(root, file).split(path.sep).join("/");

/** The room of a file under src: its first folder, or the file itself when it lies directly in src. */
function roomOf(src: string, file: string): string | undefined {
  const parts = path.relative(src, file).split(path.sep);
  if (parts[0] === ".." || parts[0] === "") return undefined;
  return parts[0];
}

function roomEdges(root: string): Edge[] {
  const src = path.join(root, SIM_SRC);
  const edges: Edge[] = [];
  for (const file of sourceFiles(src)) {
    const text = fs.readFileSync(file, "utf8");
    const from = roomOf(src, file)!;
    for (const m of text.matchAll(RELATIVE_IMPORT)) {
      const to = roomOf(src, path.resolve(path.dirname(file), m[1]!));
      if (to !== undefined && to !== from) edges.push({ from, to, where: `${rel(root, file)}:${lineOf(text, m.index!)} imports ${m[1]}` });
    }
  }
  return edges;
}

/** One message per cycle between rooms and per forbidden import, naming the file and line that closes it. */
export function simulatorRoomViolations(root: string): string[] {
  const edges = roomEdges(root);
  const out = new Map<string, Edge[]>();
  for (const e of edges) out.set(e.from, [...(out.get(e.from) ?? []), e]);
  const problems: string[] = [];
  for (const e of edges) {
    const banned = FORBIDDEN.get(e.from);
    if (banned && (banned.includes("*") || banned.includes(e.to))) problems.push(`${e.from}/ must not import ${e.to}: ${e.where}`);
  }
  // An edge from→to is on a cycle when `to` reaches `from`; report the edge with one path back.
  for (const e of edges) {
    const back = pathBetween(out, e.to, e.from);
    if (back) problems.push(`rooms cycle ${[e.from, ...back].join(" -> ")}: ${e.where}`);
  }
  return [...new Set(problems)];
}

/** A chain of rooms from `start` to `goal` (breadth first, bounded by the number of rooms), or undefined. */
function pathBetween(out: Map<string, Edge[]>, start: string, goal: string): string[] | undefined {
  const prev = new Map<string, string>([[start, start]]);
  const queue = [start];
  while (queue.length) {
    const room = queue.shift()!;
    if (room === goal) {
      const chain = [room];
      for (let r = room; r !== start; r = prev.get(r)!) chain.unshift(prev.get(r)!);
      return chain;
    }
    for (const e of out.get(room) ?? []) {
      if (!prev.has(e.to)) {
        prev.set(e.to, room);
        queue.push(e.to);
      }
    }
  }
  return undefined;
}

/** `file:line` of every import of @farm/local-services from production code under libs/ * /src. */
export function localServicesImports(root: string): string[] {
  const libs = path.join(root, "libs");
  const files = fs.existsSync(libs) ? fs.readdirSync(libs).filter((p) => p !== "local-services").flatMap((p) => sourceFiles(path.join(libs, p, "src"))) : [];
  const found: string[] = [];
  for (const file of files) {
    const where = rel(root, file);
    if (where.endsWith("/src/testing.ts") || LOCAL_SERVICES_EXCEPTIONS.has(where)) continue;
    const text = fs.readFileSync(file, "utf8");
    for (const m of text.matchAll(/["']@farm\/local-services(?:\/[^"']*)?["']/g)) found.push(`${where}:${lineOf(text, m.index!)}`);
  }
  return found;
}

test("the simulator's rooms have no import cycle and keep their layers", () => {
  assert.ok(roomEdges(REPO).length > 10, "found almost no imports between the simulator's rooms: the scan is broken");
  assert.deepEqual(simulatorRoomViolations(REPO), [], "hand what a lower room needs down from above (see libs/simulator/README.md, Layout)");
});

test("no production file imports the test-support package @farm/local-services", () => {
  assert.deepEqual(localServicesImports(REPO), [], "take it as a parameter, or use it from the package's src/testing.ts; or list the file with its reason in .ci/simulator-rooms.test.ts");
});

test("the rooms rule catches android importing apps, a cycle through other rooms, and graphics importing up", () => {
  withTree("rooms-rule-", {
    [`${SIM_SRC}/apps/registry.ts`]: 'import type { SimApp } from "../android/app-contract.ts";\n',
    [`${SIM_SRC}/android/app-contract.ts`]: 'import type { Canvas } from "../graphics/canvas.ts";\nexport type SimApp = {};\n',
    [`${SIM_SRC}/android/system/am.ts`]: '// the apps\nimport { appFactoryFor } from "../../apps/registry.ts";\n',
    [`${SIM_SRC}/graphics/canvas.ts`]: 'export class Canvas {}\n',
    [`${SIM_SRC}/grpc/server.ts`]: 'import { Canvas } from "../graphics/canvas.ts";\nimport { start } from "../device.ts";\n',
    [`${SIM_SRC}/device.ts`]: 'export const start = () => import("./grpc/server.ts");\n',
  }, (root) => {
    assert.deepEqual(simulatorRoomViolations(root).sort(), [
      "android/ must not import apps: libs/simulator/src/android/system/am.ts:2 imports ../../apps/registry.ts",
      "rooms cycle android -> apps -> android: libs/simulator/src/android/system/am.ts:2 imports ../../apps/registry.ts",
      "rooms cycle apps -> android -> apps: libs/simulator/src/apps/registry.ts:1 imports ../android/app-contract.ts",
      "rooms cycle device.ts -> grpc -> device.ts: libs/simulator/src/device.ts:1 imports ./grpc/server.ts",
      "rooms cycle grpc -> device.ts -> grpc: libs/simulator/src/grpc/server.ts:2 imports ../device.ts",
    ]);
  });
  withTree("rooms-rule-", {
    [`${SIM_SRC}/graphics/png.ts`]: 'import { Canvas } from "./canvas.ts";\nimport { rotation } from "../android/orientation.ts";\n',
    [`${SIM_SRC}/graphics/canvas.ts`]: "export class Canvas {}\n",
  }, (root) => {
    assert.deepEqual(simulatorRoomViolations(root), ["graphics/ must not import android: libs/simulator/src/graphics/png.ts:2 imports ../android/orientation.ts"]);
  });
});

test("the test-support rule catches a production import, and lets test kits and the package itself be", () => {
  withTree("rooms-rule-", {
    "libs/x/src/server.ts": 'import net from "node:net";\nimport { freePort } from "@farm/local-services";\n',
    "libs/x/src/testing.ts": 'import { startRedis } from "@farm/local-services";\n',
    "libs/x/test/a.test.ts": 'import { startRedis } from "@farm/local-services";\n',
    "libs/local-services/src/index.ts": 'export * from "@farm/local-services";\n',
  }, (root) => {
    assert.deepEqual(localServicesImports(root), ["libs/x/src/server.ts:2"]);
  });
});
