/**
 * Parses `am start|broadcast` intent arguments: `-a -d -t -c -n -f`, extras (`--es --ez --ei --el
 * --ef --ed --eu --ecn --esn --eia --ela --efa --esa`), launch flags we accept and ignore, and a
 * trailing package name or URI.
 */

export interface IntentSpec {
  action?: string;
  data?: string;
  type?: string;
  categories: string[];
  component?: string;
  flags?: string;
  /** Package named by a trailing argument or `-p`. */
  packageName?: string;
  extras: Record<string, unknown>;
}

const IGNORED_FLAG_OPTIONS = new Set([
  "--grant-read-uri-permission", "--grant-write-uri-permission", "--grant-persistable-uri-permission", "--grant-prefix-uri-permission",
  "--exclude-stopped-packages", "--include-stopped-packages", "--debug-log-resolution", "--activity-brought-to-front",
  "--activity-clear-top", "--activity-clear-when-task-reset", "--activity-exclude-from-recents", "--activity-launched-from-history",
  "--activity-multiple-task", "--activity-no-animation", "--activity-no-history", "--activity-no-user-action",
  "--activity-previous-is-top", "--activity-reorder-to-front", "--activity-reset-task-if-needed", "--activity-single-top",
  "--activity-clear-task", "--activity-task-on-home", "--activity-match-external", "--receiver-registered-only",
  "--receiver-replace-pending", "--receiver-foreground", "--receiver-no-abort", "--receiver-include-background", "--selector",
]);

function parseBool(v: string): boolean | undefined {
  const l = v.toLowerCase();
  if (l === "true" || l === "t" || l === "1") return true;
  if (l === "false" || l === "f" || l === "0") return false;
  return undefined;
}

/**
 * Consumes intent arguments from `args` starting at `i`; `onOption` gets command-specific options
 * (`-W`, `-S`, `--user`, …) first and returns how many extra arguments it consumed, or -1 if it does
 * not know the option. Returns the intent or an error message.
 */
export function parseIntentArgs(args: string[], onOption: (opt: string, next: string | undefined) => number): IntentSpec | string {
  const intent: IntentSpec = { categories: [], extras: {} };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const next = args[i + 1];
    const need = (n: number): boolean => i + n < args.length;
    if (!a.startsWith("-") || a === "-") {
      // Trailing argument, as am reads it: a URI if it has a scheme, a component if it has a slash, else a package.
      if (a.includes(":")) intent.data = a;
      else if (a.includes("/")) intent.component = a;
      else intent.packageName = a;
      continue;
    }
    const used = onOption(a, next);
    if (used >= 0) {
      i += used;
      continue;
    }
    switch (a) {
      case "-a":
      case "-d":
      case "-t":
      case "-c":
      case "-n":
      case "-f":
      case "-p":
        if (!need(1)) return `Error: No argument given for option ${a}`;
        i++;
        if (a === "-a") intent.action = next;
        else if (a === "-d") intent.data = next;
        else if (a === "-t") intent.type = next;
        else if (a === "-c") intent.categories.push(next!);
        else if (a === "-n") intent.component = next;
        else if (a === "-f") intent.flags = next;
        else intent.packageName = next;
        continue;
      case "--esn":
        if (!need(1)) return `Error: No argument given for option ${a}`;
        intent.extras[next!] = null;
        i++;
        continue;
      case "--es":
      case "--ez":
      case "--ei":
      case "--el":
      case "--ef":
      case "--ed":
      case "--eu":
      case "--ecn":
      case "--eia":
      case "--eial":
      case "--ela":
      case "--elal":
      case "--efa":
      case "--efal":
      case "--esa":
      case "--esal": {
        if (!need(2)) return `Error: No argument given for option ${a}`;
        const key = next!;
        const raw = args[i + 2]!;
        i += 2;
        let value: unknown = raw;
        if (a === "--ez") {
          value = parseBool(raw);
          if (value === undefined) return `Error: Invalid boolean value: ${raw}`;
        } else if (a === "--ei" || a === "--el") {
          value = Number(raw);
          if (!Number.isInteger(value)) return `Error: Invalid integer value: ${raw}`;
        } else if (a === "--ef" || a === "--ed") {
          value = Number(raw);
          if (!Number.isFinite(value)) return `Error: Invalid float value: ${raw}`;
        } else if (a.startsWith("--ei") || a.startsWith("--el") || a.startsWith("--ef")) {
          value = raw.split(",").map(Number);
        } else if (a.startsWith("--esa")) {
          value = raw.split(/(?<!\\),/).map((s) => s.replace(/\\,/g, ","));
        }
        intent.extras[key] = value;
        continue;
      }
      default:
        if (IGNORED_FLAG_OPTIONS.has(a)) continue;
        return `Error: Unknown option: ${a}`;
    }
  }
  return intent;
}

/** `Intent { act=… dat=… cmp=… (has extras) }` as am prints it. */
export function describeIntent(intent: IntentSpec, shortCmp: string | undefined): string {
  const parts: string[] = [];
  if (intent.action) parts.push(`act=${intent.action}`);
  if (intent.categories.length) parts.push(`cat=[${intent.categories.join(",")}]`);
  if (intent.data) parts.push(`dat=${intent.data}`);
  if (intent.type) parts.push(`typ=${intent.type}`);
  if (intent.flags) parts.push(`flg=${intent.flags}`);
  if (intent.packageName && !shortCmp) parts.push(`pkg=${intent.packageName}`);
  if (shortCmp) parts.push(`cmp=${shortCmp}`);
  if (Object.keys(intent.extras).length) parts.push("(has extras)");
  return `Intent { ${parts.join(" ")} }`;
}
