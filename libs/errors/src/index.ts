/**
 * @module @farm/errors
 * The one error base of the farm and the one way to turn a caught value into an Error.
 *
 *   class PolicyError extends FarmError<PolicyErrorCode> { override readonly name = "PolicyError"; }
 *   throw new PolicyError("timeout", "no answer in 30 s", { retryable: true });
 *   catch (e) { if (e instanceof FarmError && e.retryable) …; log(coerceError(e).message); }
 *
 * Every FarmError has a stable `code` (callers, metrics and wire formats branch on it, never on the message)
 * and `retryable` (whether the same call or job can succeed if tried again). `instanceof FarmError` is safe
 * across copies of this module (two installs, a bundled worker): it checks a global brand, not identity.
 */
const BRAND = Symbol.for("@farm/errors/FarmError");

export interface FarmErrorOptions {
  /** Whether trying the same call (or job) again can help. @default false */
  retryable?: boolean;
  cause?: unknown;
}

export class FarmError<Code extends string = string> extends Error {
  readonly [BRAND] = true;
  readonly code: Code;
  readonly retryable: boolean;

  constructor(code: Code, message: string, opts: FarmErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.code = code;
    this.retryable = opts.retryable ?? false;
  }

  /** `x instanceof FarmError` by brand (any copy of this module); subclasses keep the ordinary prototype check. */
  static override [Symbol.hasInstance](x: unknown): boolean {
    if (this === FarmError) return isFarmError(x);
    return Function.prototype[Symbol.hasInstance].call(this, x);
  }
}

export function isFarmError(x: unknown): x is FarmError {
  return typeof x === "object" && x !== null && (x as Record<symbol, unknown>)[BRAND] === true;
}

/** A caught value as an Error: an Error as is, anything else wrapped (its String() as the message). */
export function coerceError(e: unknown): Error {
  if (e instanceof Error) return e;
  if (typeof e === "object" && e !== null && typeof (e as { message?: unknown }).message === "string") {
    return Object.assign(new Error((e as { message: string }).message), { cause: e });
  }
  return new Error(String(e), { cause: e });
}

/** The errno code of a failed system call (`ENOENT`, `EEXIST`, …), or undefined for anything else. */
export function errnoCode(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null | undefined)?.code;
  return typeof code === "string" ? code : undefined;
}
