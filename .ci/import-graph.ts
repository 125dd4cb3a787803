/**
 * The import-graph check CI runs before the tests (`npm run check:imports`): no import cycle between files or
 * between packages; no import of another package's `src/` (packages import each other as `@farm/<name>`); a
 * lib's `src/` uses only the libs before it in README.md's "Libraries, in dependency order" list; lib code and
 * lib tests import no service and no loadtest code; every lib is in that list.
 *
 * Our own ~150 lines instead of madge / dependency-cruiser: the one rule that matters most (README's lib order)
 * would need a generated config there anyway, and the TypeScript compiler we already depend on finds every
 * import (static, `import type`, re-exports, dynamic `import()`). `import type` counts: a cycle through types
 * is still two files that cannot be read apart.
 *
 *   node --import tsx .ci/import-graph.ts [repo root]   # prints `file:line: message` per violation, exit 1 if any
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

export interface Violation {
  file: string;
  line: number;
  message: string;
}

interface Pkg {
  /** `@farm/<name>` */
  name: string;
  dir: string;
  kind: "lib" | "service" | "loadtest";
  /** Subpaths the package's `exports` map declares besides "." (public entry points, e.g. "./wire"). */
  entryPoints: Set<string>;
}

function readPkg(pj: string, kind: Pkg["kind"]): Pkg {
  const json = JSON.parse(fs.readFileSync(pj, "utf8")) as { name: string; exports?: unknown };
  const exp = json.exports;
  const entryPoints = new Set(exp && typeof exp === "object" ? Object.keys(exp).filter((k) => k !== ".") : []);
  return { name: json.name, dir: path.dirname(pj), kind, entryPoints };
}

interface Edge {
  from: string;
  to: string;
  line: number;
}

const SOURCE = /\.(ts|js|mjs)$/;

function listPackages(root: string): Pkg[] {
  const out: Pkg[] = [];
  for (const [group, kind] of [["libs", "lib"], ["services", "service"]] as const) {
    const base = path.join(root, group);
    if (!fs.existsSync(base)) continue;
    for (const d of fs.readdirSync(base).sort()) {
      const pj = path.join(base, d, "package.json");
      if (fs.existsSync(pj)) out.push(readPkg(pj, kind));
    }
  }
  const lt = path.join(root, "loadtest/package.json");
  if (fs.existsSync(lt)) out.push(readPkg(lt, "loadtest"));
  return out;
}

/** The lib order from README.md: the backticked names after "Libraries, in dependency order", up to the blank line. */
export function readLibOrder(readme: string): string[] {
  const at = readme.indexOf("Libraries, in dependency order");
  if (at < 0) return [];
  const para = readme.slice(at).split(/\n\s*\n/)[0] ?? "";
  return [...para.matchAll(/`([a-z0-9-]+)`/g)].map((m) => `@farm/${m[1]}`);
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      if (e.name === "node_modules" || e.name.startsWith(".")) continue;
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (SOURCE.test(e.name) && !e.name.endsWith(".d.ts")) out.push(p);
    }
  };
  for (const sub of ["src", "test", "bin"]) if (fs.existsSync(path.join(dir, sub))) walk(path.join(dir, sub));
  return out;
}

function imports(file: string): { spec: string; line: number }[] {
  const text = fs.readFileSync(file, "utf8");
  const info = ts.preProcessFile(text, true, true);
  const lineOf = (pos: number) => text.slice(0, pos).split("\n").length;
  return info.importedFiles.map((f) => ({ spec: f.fileName, line: lineOf(f.pos) }));
}

function resolveRelative(from: string, spec: string): string | undefined {
  const base = path.resolve(path.dirname(from), spec);
  for (const c of [base, `${base}.ts`, path.join(base, "index.ts")]) if (fs.existsSync(c) && fs.statSync(c).isFile()) return c;
  return undefined;
}

/** Strongly connected components with more than one node (or a self-loop): the cycles. Tarjan, iterative enough for our sizes. */
export function cycles(nodes: string[], edges: Map<string, Set<string>>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const comp: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1 || edges.get(v)?.has(v)) out.push(comp.sort());
    }
  };
  for (const n of nodes) if (!idx.has(n)) visit(n);
  return out;
}

export function checkImportGraph(root: string): Violation[] {
  const out: Violation[] = [];
  const rel = (f: string) => path.relative(root, f);
  const pkgs = listPackages(root);
  const byName = new Map(pkgs.map((p) => [p.name, p]));
  const pkgOf = (file: string) => pkgs.find((p) => file.startsWith(p.dir + path.sep));
  const readmePath = path.join(root, "README.md");
  const order = readLibOrder(fs.existsSync(readmePath) ? fs.readFileSync(readmePath, "utf8") : "");
  for (const p of pkgs) {
    if (p.kind === "lib" && !order.includes(p.name)) out.push({ file: rel(path.join(p.dir, "package.json")), line: 1, message: `${p.name} is missing from README.md's "Libraries, in dependency order" list` });
  }

  const fileEdges = new Map<string, Set<string>>();
  const pkgEdges = new Map<string, Set<string>>();
  const files = pkgs.flatMap((p) => sourceFiles(p.dir));
  for (const file of files) {
    const from = pkgOf(file)!;
    const isSrc = file.startsWith(path.join(from.dir, "src") + path.sep);
    for (const { spec, line } of imports(file)) {
      const at = { file: rel(file), line };
      if (spec.startsWith(".")) {
        const target = resolveRelative(file, spec);
        if (!target) continue; // the type check reports it
        const to = pkgOf(target);
        if (to !== from) out.push({ ...at, message: `'${spec}' reaches into ${to ? to.name : rel(target)}; import it as ${to ? `'${to.name}'` : "a package"}` });
        else (fileEdges.get(file) ?? fileEdges.set(file, new Set()).get(file)!).add(target);
        continue;
      }
      const m = /^(@farm\/[a-z0-9-]+)(\/.*)?$/.exec(spec);
      if (!m) continue;
      const to = byName.get(m[1]!);
      if (!to) continue;
      if (m[2] && !to.entryPoints.has(`.${m[2]}`)) out.push({ ...at, message: `'${spec}' reaches into ${to.name}'s files; import '${to.name}' only` });
      if (to === from) continue; // a package's tests may import it by name (its public API)
      if (from.kind === "lib" && to.kind !== "lib") out.push({ ...at, message: `a lib (${from.name}) must not import ${to.kind === "service" ? "a service" : "loadtest"} (${to.name})` });
      if (from.kind === "lib" && to.kind === "lib" && isSrc && order.indexOf(to.name) >= order.indexOf(from.name)) {
        out.push({ ...at, message: `${from.name} may use only the libs before it in README.md's order; ${to.name} is not` });
      }
      if (isSrc) (pkgEdges.get(from.name) ?? pkgEdges.set(from.name, new Set()).get(from.name)!).add(to.name);
    }
  }
  for (const c of cycles(files, fileEdges)) out.push({ file: rel(c[0]!), line: 1, message: `import cycle between files: ${c.map(rel).join(" ⇄ ")}` });
  for (const c of cycles(pkgs.map((p) => p.name), pkgEdges)) out.push({ file: "package.json", line: 1, message: `import cycle between packages: ${c.join(" ⇄ ")}` });
  return out;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = path.resolve(process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), ".."));
  const v = checkImportGraph(root);
  for (const x of v) console.error(`${x.file}:${x.line}: ${x.message}`);
  if (v.length) {
    console.error(`import graph: ${v.length} violation(s)`);
    process.exit(1);
  }
  console.log("import graph: no cycles, no reach into another package's files, README's lib order kept");
}
