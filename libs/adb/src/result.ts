/** StepResult/ShellResult constructors and the mapping of adbkit/socket errors onto statuses. */
import { AdbWireError } from "@farm/adb-wire";
import type { ShellResult, StepResult, StepStatus } from "./types.ts";
import { FarmError } from "@farm/errors";

export function stepResult(status: StepStatus, message: string, output = "", durationMs = 0, data?: StepResult["data"]): StepResult {
  return data === undefined ? { status, message, output, durationMs } : { status, message, output, data, durationMs };
}

export function ok(output = "", data?: StepResult["data"]): StepResult {
  return stepResult("ok", "", output, 0, data);
}

export function fail(status: Exclude<StepStatus, "ok">, message: string, output = ""): StepResult {
  return stepResult(status, message, output);
}

export function shellToStep(r: ShellResult): StepResult {
  return { status: r.status, message: r.message, output: r.stdout, durationMs: r.durationMs };
}

/** Thrown inside the driver only; converted to a result at the boundary. */
export class DeadlineError extends FarmError<"deadline"> {
  override readonly name = "DeadlineError";
  /** a later try can succeed (transient): retryable. */
  constructor(readonly op: string, readonly timeoutMs: number) {
    super("deadline", `${op} did not answer within ${timeoutMs} ms`, { retryable: true });
  }
}

/** Turns whatever adbkit, @farm/adb-wire or a socket threw into an `adb_error`/`timeout` message that says what happened. */
export function describeError(err: unknown, ctx: { serial?: string; host: string; port: number }): { status: StepStatus; message: string } {
  if (err instanceof DeadlineError || (err instanceof AdbWireError && (err.code === "timeout" || err.code === "cancelled"))) return { status: "timeout", message: err.message };
  const wire = err instanceof AdbWireError ? err : undefined;
  // An AdbWireError's `code` is its kind; the socket's errno, if one caused it, is `errno`.
  const e = (wire ? { message: wire.message, code: wire.errno, name: wire.code === "closed" ? "PrematureEOFError" : wire.name } : err) as { message?: string; code?: string; name?: string } | undefined;
  const msg = String(e?.message ?? err);
  const where = `adb server ${ctx.host}:${ctx.port}`;
  if (e?.code === "ECONNREFUSED" || (!wire && /start-server|ECONNREFUSED/.test(msg)))
    return { status: "adb_error", message: `no adb server answers at ${ctx.host}:${ctx.port} (connection refused); the driver never starts or restarts it` };
  if (e?.code === "ECONNRESET" || e?.code === "EPIPE") return { status: "adb_error", message: `connection to ${where} reset (${e.code})` };
  const notFound = /device '?([^' ]*)'? not found|device not found/.exec(msg);
  if (notFound) return { status: "adb_error", message: `device '${ctx.serial ?? notFound[1] ?? "?"}' not found on ${where}` };
  if (/device offline/.test(msg)) return { status: "adb_error", message: `device '${ctx.serial ?? "?"}' is offline on ${where}` };
  if (/unauthorized/.test(msg)) return { status: "adb_error", message: `device '${ctx.serial ?? "?"}' is unauthorized on ${where}` };
  if (e?.name === "PrematureEOFError" || /Premature end of stream/.test(msg))
    return { status: "adb_error", message: `stream from device '${ctx.serial ?? "?"}' ended early (device gone or connection dropped) on ${where}` };
  return { status: "adb_error", message: `adb error for device '${ctx.serial ?? "?"}' on ${where}: ${msg}` };
}
