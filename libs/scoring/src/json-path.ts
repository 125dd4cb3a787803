/**
 * The `json` comparison's path (FAMILIES.md): `$`, then `.name`, `["name"]` / `['name']` and `[N]` steps, as in
 * JSONPath's simple form. A path that names nothing gives undefined. Steps are looked up as own properties only.
 */
export type PathStep = string | number;

export function parseJsonPath(path: string): PathStep[] {
  if (!path.startsWith("$")) throw new Error(`JSON path ${JSON.stringify(path)} does not start with $`);
  const steps: PathStep[] = [];
  let i = 1;
  while (i < path.length) {
    const c = path[i];
    if (c === ".") {
      const m = /^[A-Za-z_$][\w$-]*/.exec(path.slice(i + 1));
      if (!m) throw new Error(`JSON path ${JSON.stringify(path)}: a name must follow "." at ${i}`);
      steps.push(m[0]);
      i += 1 + m[0].length;
    } else if (c === "[") {
      const rest = path.slice(i);
      const idx = /^\[(\d{1,9})\]/.exec(rest);
      const quoted = /^\[("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')\]/.exec(rest);
      if (idx) {
        steps.push(Number(idx[1]));
        i += idx[0].length;
      } else if (quoted) {
        const q = quoted[1]!;
        steps.push(q.startsWith('"') ? (JSON.parse(q) as string) : q.slice(1, -1).replace(/\\(.)/g, "$1"));
        i += quoted[0].length;
      } else throw new Error(`JSON path ${JSON.stringify(path)}: expected [N] or ["name"] at ${i}`);
    } else throw new Error(`JSON path ${JSON.stringify(path)}: unexpected ${JSON.stringify(c)} at ${i}`);
  }
  return steps;
}

export function selectJsonPath(value: unknown, steps: readonly PathStep[]): unknown {
  let v: unknown = value;
  for (const s of steps) {
    if (typeof s === "number") {
      if (!Array.isArray(v) || s >= v.length) return undefined;
      v = v[s];
    } else {
      if (v === null || typeof v !== "object" || Array.isArray(v) || !Object.hasOwn(v, s)) return undefined;
      v = (v as Record<string, unknown>)[s];
    }
  }
  return v;
}

/** A selected JSON value as the text comparisons see it: strings as they are, anything else as compact JSON. */
export function jsonText(v: unknown): string {
  return typeof v === "string" ? v : JSON.stringify(v);
}
