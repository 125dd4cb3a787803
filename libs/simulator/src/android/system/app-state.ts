/**
 * Saves and restores a running app's own fields for device snapshots, generically, so every app
 * (and every app added later) is covered without code of its own: plain data is copied, a seeded
 * random generator is kept as its state, the host link is skipped. Anything else (a function, a
 * class instance) is refused loudly at save time rather than silently lost.
 */
import type { SeededRandom } from "./rng.ts";

export type SavedValue =
  | null
  | boolean
  | number
  | string
  | SavedValue[]
  | { readonly $: "undefined" }
  | { readonly $: "rng"; readonly state: number }
  | { readonly $: "object"; readonly fields: Record<string, SavedValue> };

function isRng(v: object): v is SeededRandom {
  const r = v as Partial<SeededRandom>;
  return typeof r.getState === "function" && typeof r.setState === "function" && typeof r.next === "function";
}

function isPlainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function saveValue(v: unknown, where: string): SavedValue {
  if (v === undefined) return { $: "undefined" };
  if (v === null || typeof v === "boolean" || typeof v === "string") return v;
  if (typeof v === "number") {
    if (!Number.isFinite(v)) throw new Error(`${where}: non-finite number cannot be snapshotted`);
    return v;
  }
  if (Array.isArray(v)) return v.map((x, i) => saveValue(x, `${where}[${i}]`));
  if (typeof v === "object" && isRng(v)) return { $: "rng", state: v.getState() };
  if (typeof v === "object" && isPlainObject(v)) {
    const fields: Record<string, SavedValue> = {};
    for (const [k, x] of Object.entries(v)) fields[k] = saveValue(x, `${where}.${k}`);
    return { $: "object", fields };
  }
  throw new Error(`${where}: a ${typeof v === "object" ? (v.constructor?.name ?? "object") : typeof v} cannot be snapshotted (keep app state to plain data and SeededRandom)`);
}

/** The app's own enumerable fields except `skip` (its host). */
export function saveAppFields(app: object, skip: object, appName: string): Record<string, SavedValue> {
  const out: Record<string, SavedValue> = {};
  for (const [k, v] of Object.entries(app)) {
    if (v === skip) continue;
    out[k] = saveValue(v, `${appName}.${k}`);
  }
  return out;
}

function loadValue(saved: SavedValue, current: unknown): unknown {
  if (saved === null || typeof saved !== "object") return saved;
  if (Array.isArray(saved)) return saved.map((x) => loadValue(x, undefined));
  if (saved.$ === "undefined") return undefined;
  if (saved.$ === "rng") {
    // Reuse the generator the fresh instance already has; only its position changes.
    if (current && typeof current === "object" && isRng(current)) {
      current.setState(saved.state);
      return current;
    }
    throw new Error("snapshot holds a random generator where the app has none");
  }
  const obj: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(saved.fields)) obj[k] = loadValue(x, undefined);
  return obj;
}

/** Puts saved fields back onto a freshly constructed instance of the same app. */
export function restoreAppFields(app: object, fields: Readonly<Record<string, SavedValue>>): void {
  const target = app as Record<string, unknown>;
  for (const [k, saved] of Object.entries(fields)) target[k] = loadValue(saved, target[k]);
}
