import { FarmError } from "@farm/errors";
import { terminalSafe } from "@farm/terminal-text";
import { intInRange } from "./int-text.ts";

/** What a service's config module hands over: `process.env`, or a plain map in tests. */
export type Environment = Readonly<Record<string, string | undefined>>;

/** A bad setting: never worth retrying with the same configuration. */
export class ConfigError extends FarmError<"CONFIG_INVALID"> {
  override readonly name = "ConfigError";
  constructor(message: string) {
    super("CONFIG_INVALID", message, { retryable: false });
  }
}

/** Where one setting comes from: an explicit value (flag or option), else an environment variable, else the default. */
export interface Setting<T> {
  flag?: T | string | undefined;
  env?: string;
  default: T;
}

const MAX_SHOWN = 80;
/** A value for an error message: cut short, and never raw control or bidi characters (the message reaches a terminal). */
const shown = (v: unknown): string => terminalSafe(String(v).slice(0, MAX_SHOWN));
const alternatives = (xs: readonly string[]): string => (xs.length < 2 ? xs.join("") : `${xs.slice(0, -1).join(", ")} or ${xs.at(-1)}`);

/**
 * Reads typed settings for one service. Empty environment variables count as unset (compose files
 * and Kubernetes manifests often write `FOO=` for "no value").
 */
export class SettingsReader {
  constructor(
    private readonly service: string,
    private readonly env: Environment,
  ) {}

  /** The raw value and the label errors use: `name (ENV)`. */
  private pick<T>(name: string, s: Setting<T>): { value: T | string | undefined; label: string } {
    const fromEnv = s.env === undefined ? undefined : this.env[s.env];
    const value = s.flag !== undefined ? s.flag : fromEnv !== undefined && fromEnv !== "" ? fromEnv : undefined;
    return { value, label: s.env ? `${name} (${s.env})` : name };
  }

  /** The environment itself, for rules that derive a default from it (e.g. where emulators write discovery files). */
  get environment(): Environment {
    return this.env;
  }

  fail(label: string, message: string): never {
    throw new ConfigError(`${this.service} config: ${label} ${message}`);
  }

  /** A raw environment value for settings a service parses itself; empty counts as unset. */
  envValue(name: string): string | undefined {
    const v = this.env[name];
    return v === undefined || v === "" ? undefined : v;
  }

  string(name: string, s: Setting<string>): string;
  string(name: string, s: Setting<string | undefined>): string | undefined;
  string(name: string, s: Setting<string | undefined>): string | undefined {
    const { value } = this.pick(name, s);
    return value === undefined ? s.default : String(value);
  }

  int(name: string, s: Setting<number> & { min: number; max: number }): number {
    const { value, label } = this.pick(name, s);
    if (value === undefined) return s.default;
    // Blanks around an environment value are layout (compose files, manifests), not part of the number.
    const n = intInRange(typeof value === "number" ? value : value.trim(), s.min, s.max);
    return n ?? this.fail(label, `must be an integer in ${s.min}..${s.max}, got '${shown(value)}'`);
  }

  bool(name: string, s: Setting<boolean>): boolean {
    const { value, label } = this.pick(name, s);
    if (value === undefined) return s.default;
    if (typeof value === "boolean") return value;
    if (/^(1|true|yes|on)$/i.test(value)) return true;
    if (/^(0|false|no|off)$/i.test(value)) return false;
    return this.fail(label, `must be true or false (1/0, yes/no), got '${shown(value)}'`);
  }

  oneOf<const V extends string>(name: string, allowed: readonly V[], s: Setting<V>): V {
    const { value, label } = this.pick(name, s);
    if (value === undefined) return s.default;
    if (!(allowed as readonly string[]).includes(value)) this.fail(label, `must be ${alternatives(allowed)}, got '${shown(value)}'`);
    return value as V;
  }

  /** Comma-separated in the environment, an array (or one comma-separated string) as a flag; blanks dropped. */
  list(name: string, s: Setting<string[]>): string[];
  list(name: string, s: Setting<string[] | undefined>): string[] | undefined;
  list(name: string, s: Setting<string[] | undefined>): string[] | undefined {
    const { value } = this.pick<string[] | undefined>(name, s);
    if (value === undefined) return s.default;
    return (Array.isArray(value) ? value : String(value).split(",")).map((v) => v.trim()).filter((v) => v !== "");
  }

  /** Runs a service's own check on a value; its error message lands under the setting's label. */
  check<T>(name: string, envName: string | undefined, value: T, validate: (v: T) => void): T {
    try {
      validate(value);
    } catch (e) {
      this.fail(envName ? `${name} (${envName})` : name, e instanceof Error ? e.message : String(e));
    }
    return value;
  }
}
