import { FarmError, coerceError } from "@farm/errors";
/**
 * The simulated APK format: a magic first line `SIMAPK 1`, then one JSON object naming the package,
 * its version, its activities (fully qualified; the first is the launcher activity), the app
 * implementation that runs it (see src/apps/registry.ts) and a label. Real bytes, so `adb push` +
 * `pm install`, `adb install` and `cmd package install -S` work end to end.
 */

export const SIM_APK_MAGIC = "SIMAPK 1";

export interface SimApkSpec {
  packageName: string;
  versionCode: number;
  /** Activity class names, fully qualified or short (`.MainActivity`); the first one is the launcher. */
  activities: string[];
  /** App implementation id, e.g. `classic-2048`. */
  app: string;
  label?: string;
}

export interface SimApkManifest {
  packageName: string;
  versionCode: number;
  activities: string[];
  app: string;
  label: string;
}

export class SimApkError extends FarmError<"invalid_apk"> {
  override readonly name = "SimApkError";
  /** the same input fails the same way (not retryable). */
  constructor(message: string) {
    super("invalid_apk", message);
  }
}

const PACKAGE_NAME = /^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$/;
const CLASS_NAME = /^[A-Za-z_$][A-Za-z0-9_$]*(\.[A-Za-z_$][A-Za-z0-9_$]*)*$/;

/** `.Foo` → `pkg.Foo`; a name without a dot is taken relative to the package as well. */
export function expandActivityName(packageName: string, activity: string): string {
  if (activity.startsWith(".")) return packageName + activity;
  if (!activity.includes(".")) return `${packageName}.${activity}`;
  return activity;
}

function validate(spec: SimApkSpec): SimApkManifest {
  if (typeof spec.packageName !== "string" || !PACKAGE_NAME.test(spec.packageName)) throw new SimApkError(`invalid package name: ${String(spec.packageName)}`);
  if (!Number.isInteger(spec.versionCode) || spec.versionCode < 0) throw new SimApkError(`invalid versionCode: ${String(spec.versionCode)}`);
  if (!Array.isArray(spec.activities) || spec.activities.length === 0) throw new SimApkError("an APK needs at least one activity");
  const activities = spec.activities.map((a) => {
    if (typeof a !== "string") throw new SimApkError(`invalid activity: ${String(a)}`);
    const full = expandActivityName(spec.packageName, a);
    if (!CLASS_NAME.test(full)) throw new SimApkError(`invalid activity: ${a}`);
    return full;
  });
  if (typeof spec.app !== "string" || spec.app === "") throw new SimApkError("missing app implementation id");
  const label = spec.label ?? spec.packageName;
  if (typeof label !== "string") throw new SimApkError("invalid label");
  return { packageName: spec.packageName, versionCode: spec.versionCode, activities, app: spec.app, label };
}

export function buildSimApk(spec: SimApkSpec): Uint8Array {
  const m = validate(spec);
  const json = JSON.stringify({ package: m.packageName, versionCode: m.versionCode, label: m.label, app: m.app, activities: m.activities }, null, 2);
  return new TextEncoder().encode(`${SIM_APK_MAGIC}\n${json}\n`);
}

/** Parses and validates a simulated APK; throws SimApkError for anything else (a real APK, garbage, bad fields). */
export function parseSimApk(bytes: Uint8Array): SimApkManifest {
  const text = new TextDecoder("utf-8", { fatal: false }).decode(bytes);
  const nl = text.indexOf("\n");
  if (nl < 0 || text.slice(0, nl).replace(/\r$/, "") !== SIM_APK_MAGIC) throw new SimApkError("not a simulated APK (bad magic line)");
  let raw: unknown;
  try {
    raw = JSON.parse(text.slice(nl + 1));
  } catch (e) {
    throw new SimApkError(`corrupt simulated APK: ${coerceError(e).message}`);
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new SimApkError("corrupt simulated APK: manifest is not an object");
  const o = raw as Record<string, unknown>;
  return validate({
    packageName: o.package as string,
    versionCode: o.versionCode as number,
    activities: o.activities as string[],
    app: o.app as string,
    label: o.label as string | undefined,
  });
}
