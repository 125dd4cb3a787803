/** Shape checks for Android package, activity and logcat tag names. */

const SEGMENT = "[A-Za-z][A-Za-z0-9_]*";
/** Android application ids: at least two dot-separated segments, each starting with a letter. */
const PACKAGE = new RegExp(`^${SEGMENT}(?:\\.${SEGMENT})+$`);
const JAVA_IDENT = "[A-Za-z_$][A-Za-z0-9_$]*";
/** `.Short` (relative to the package) or a qualified class name with at least one dot. */
const CLASS = new RegExp(`^(?:\\.${JAVA_IDENT}(?:\\.${JAVA_IDENT})*|${JAVA_IDENT}(?:\\.${JAVA_IDENT})+)$`);

export function isPackageName(s: string): boolean {
  return PACKAGE.test(s);
}

/** `pkg/full.class.Name` or `pkg/.Short`. */
export function isActivityName(s: string): boolean {
  const slash = s.indexOf("/");
  if (slash < 0) return false;
  return isPackageName(s.slice(0, slash)) && CLASS.test(s.slice(slash + 1));
}

/** A name usable in a logcat filter spec `<tag>:<priority>`. */
export function isLogcatTag(s: string): boolean {
  return /^[^\s:*]+$/.test(s);
}
