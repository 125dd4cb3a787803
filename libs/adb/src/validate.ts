/** Early validation of values that come from tasks and jobs (a bad value is `failed_precondition`, before any device command). */

const PACKAGE = /^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+$/;
const CLASS_PART = "[A-Za-z_$][A-Za-z0-9_$]*";
const CLASS = new RegExp(`^\\.?${CLASS_PART}(\\.${CLASS_PART})*$`);

/** Undefined when valid, else why not. */
export function checkPackage(name: string): string | undefined {
  if (name === "") return "package name is empty";
  if (!PACKAGE.test(name)) return `invalid package name ${JSON.stringify(name)} (expected e.g. com.example.app)`;
  return undefined;
}

/** `pkg/full.class.Name` or `pkg/.Name`. */
export function checkActivity(full: string): string | undefined {
  if (full === "") return "activity is empty";
  const slash = full.indexOf("/");
  if (slash < 0) return `invalid activity ${JSON.stringify(full)} (expected pkg/pkg.Activity)`;
  const pkgErr = checkPackage(full.slice(0, slash));
  if (pkgErr) return `invalid activity ${JSON.stringify(full)}: ${pkgErr}`;
  if (!CLASS.test(full.slice(slash + 1))) return `invalid activity ${JSON.stringify(full)}: bad class name`;
  return undefined;
}

/** Android permission names and settings keys: dotted identifiers. */
export function checkIdentifier(what: string, v: string): string | undefined {
  if (v === "") return `${what} is empty`;
  if (!/^[A-Za-z0-9_.:-]+$/.test(v)) return `invalid ${what} ${JSON.stringify(v)}`;
  return undefined;
}

/** A device path for push/pull: absolute, no NUL or newline. */
export function checkDevicePath(p: string): string | undefined {
  if (p === "") return "device path is empty";
  if (!p.startsWith("/")) return `device path ${JSON.stringify(p)} must be absolute`;
  if (/[\0\n]/.test(p)) return `device path ${JSON.stringify(p)} contains a NUL or newline`;
  return undefined;
}

/** `pkg/.Receiver` style component for broadcasts (same shape as an activity). */
export const checkComponent = checkActivity;

/** Expands `pkg/.Name` to `pkg/pkg.Name`. */
export function expandActivity(full: string): string {
  const slash = full.indexOf("/");
  if (slash < 0) return full;
  const pkg = full.slice(0, slash);
  const cls = full.slice(slash + 1);
  return cls.startsWith(".") ? `${pkg}/${pkg}${cls}` : full;
}
