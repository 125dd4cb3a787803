/** Component names: `pkg/.Act` ↔ `pkg/pkg.Act`, and the short class names apps use. */
import { expandActivityName } from "../../apk/sim-apk.ts";

export interface ComponentName {
  packageName: string;
  /** Fully qualified class name. */
  className: string;
}

/** Parses `pkg/cls` where cls may be `.Short`; undefined when malformed. */
export function parseComponent(text: string): ComponentName | undefined {
  const slash = text.indexOf("/");
  if (slash <= 0 || slash === text.length - 1) return undefined;
  const packageName = text.slice(0, slash);
  return { packageName, className: expandActivityName(packageName, text.slice(slash + 1)) };
}

/** `pkg/pkg.Act` — the form `am stack list` and `dumpsys window` report here. */
export function flatComponent(c: ComponentName): string {
  return `${c.packageName}/${c.className}`;
}

/** `pkg/.Act` when the class lives in the package, as `am start` prints it. */
export function shortComponent(c: ComponentName): string {
  return c.className.startsWith(c.packageName + ".") ? `${c.packageName}/${c.className.slice(c.packageName.length)}` : flatComponent(c);
}

/** The class name relative to the package (`MainActivity`), or the full name when it lives elsewhere. */
export function relativeClass(packageName: string, className: string): string {
  const rest = className.startsWith(packageName + ".") ? className.slice(packageName.length + 1) : "";
  return rest && !rest.includes(".") ? rest : className;
}

export function absoluteClass(packageName: string, relative: string): string {
  return relative.includes(".") ? relative : `${packageName}.${relative}`;
}

/** Last segment of a class name (`MainActivity`), used in window titles. */
export function simpleClass(className: string): string {
  return className.slice(className.lastIndexOf(".") + 1);
}
