/**
 * Every device command goes through here: a deadline that closes the call's server connection on expiry (host
 * requests over @farm/adb-wire, adbkit's sync service, the shell), error classification, the metrics hook and a log line.
 */
import type { AdbCallEvent, ResolvedAdbConfig } from "./config.ts";
import type { FrameThreads } from "./frame-threads.ts";
import type { GrpcEndpoints } from "./grpc/endpoints.ts";
import { deviceState, type RequestOptions, type ServerAddress } from "@farm/adb-wire";
import { syncHandle, underDeadline, type AdbClient, type AdbSync } from "./client.ts";
import { describeError } from "./result.ts";
import { ShellSession, type ShellSessions } from "./shell-session.ts";
import { shellSocket } from "./shell-socket.ts";
import type { ShellResult, StepStatus } from "./types.ts";
import { checkShellRequest } from "./validate.ts";

export interface DeviceCtx {
  readonly client: AdbClient;
  readonly cfg: ResolvedAdbConfig;
  readonly serial: string;
  /** Frame capture and encoding off the event loop (`Device.frame`); absent = on the event loop. */
  readonly frameThreads?: FrameThreads;
  /** Where this driver's devices have an emulator gRPC endpoint (actions and frames go there). */
  readonly grpc?: GrpcEndpoints;
  /** The driver's long-lived shell per device (absent: every command on its own connection). */
  readonly shells?: ShellSessions;
}

export type CallOutcome<T> = { ok: true; value: T; durationMs: number } | { ok: false; status: StepStatus; message: string; durationMs: number };

/**
 * One public driver operation finished: the metrics hook (`events.onCall`) and a log line. Only public
 * operations report (`step:<kind>`, `action:<kind>`, `shell`, `state`, …), so a step that runs three
 * device commands counts once and the op label set stays small and closed.
 */
export function report(ctx: { cfg: ResolvedAdbConfig; serial?: string }, op: string, status: string, durationMs: number, message = ""): void {
  // Assigned, not spread first: on Node 20 an object literal that starts with a spread and goes on with more
  // properties costs ~1-4 µs to make (measured), and this runs for every action.
  const call: AdbCallEvent = { op, status, durationMs };
  if (ctx.serial !== undefined) call.serial = ctx.serial;
  try {
    ctx.cfg.events.onCall?.(call);
  } catch {
    // a metrics hook must never break a device call
  }
  // Checked first: the line's object is built on every action otherwise, to be dropped at the usual levels.
  if (status === "ok") {
    if (ctx.cfg.logger.isLevelEnabled("debug")) ctx.cfg.logger.debug({ event: "adb:call", serial: ctx.serial, op, status, durationMs }, "adb call");
  }
  else ctx.cfg.logger.warn({ event: "adb:call", serial: ctx.serial, op, status, durationMs, message }, "adb call failed");
}

/** A device command inside a public operation: a debug log line only. */
function trace(ctx: DeviceCtx, op: string, status: string, durationMs: number, message = ""): void {
  if (ctx.cfg.logger.isLevelEnabled("debug")) ctx.cfg.logger.debug({ event: "adb:command", serial: ctx.serial, op, status, durationMs, message }, "adb command");
}

/** Runs `fn` on a sync-service session (push, pull, stat) under a deadline; the session is ended either way. Never throws. */
export function syncCall<T>(ctx: DeviceCtx, op: string, timeoutMs: number, fn: (sync: AdbSync) => PromiseLike<T>): Promise<CallOutcome<T>> {
  return guardedCall(ctx, op, timeoutMs, () => {
    const h = syncHandle(ctx.client, ctx.serial);
    return { handle: h, work: () => h.sync().then((s) => Promise.resolve(fn(s)).finally(() => s.end())) };
  });
}

/** A host request (@farm/adb-wire) under a deadline; the deadline aborts it, which closes its connection. Never throws. */
export function hostCall<T>(ctx: DeviceCtx, op: string, timeoutMs: number, fn: (server: ServerAddress, opts: RequestOptions) => Promise<T>): Promise<CallOutcome<T>> {
  return guardedCall(ctx, op, timeoutMs, () => {
    const ac = new AbortController();
    return { handle: { destroy: () => ac.abort() }, work: () => fn({ host: ctx.cfg.host, port: ctx.cfg.port }, { timeoutMs, signal: ac.signal }) };
  });
}

/** The device's state on the server (`host-serial:<serial>:get-state`). */
export const stateCall = (ctx: DeviceCtx, timeoutMs: number): Promise<CallOutcome<string>> => hostCall(ctx, "get-state", timeoutMs, (server, opts) => deviceState(server, ctx.serial, opts));

/**
 * Starts a call (its connections released by `handle.destroy()`) under a deadline: trouble classified as the
 * driver's statuses, a debug trace line. Never throws.
 */
export async function guardedCall<T>(ctx: DeviceCtx, op: string, timeoutMs: number, start: () => { handle: { destroy(): void }; work: () => PromiseLike<T> }): Promise<CallOutcome<T>> {
  const t0 = performance.now();
  if (!(timeoutMs > 0)) {
    const d = performance.now() - t0;
    trace(ctx, op, "timeout", d);
    return { ok: false, status: "timeout", message: `${op} on '${ctx.serial}': no time left before the deadline`, durationMs: d };
  }
  const { handle, work } = start();
  try {
    const value = await underDeadline(handle, timeoutMs, `${op} on '${ctx.serial}'`, work);
    const d = performance.now() - t0;
    trace(ctx, op, "ok", d);
    return { ok: true, value, durationMs: d };
  } catch (e) {
    const d = performance.now() - t0;
    const { status, message } = describeError(e, { serial: ctx.serial, host: ctx.cfg.host, port: ctx.cfg.port });
    trace(ctx, op, status, d, message);
    return { ok: false, status, message, durationMs: d };
  }
}

/**
 * `<commandLine>` then `echo <marker>` under a deadline: through the device's shell session when it is idle
 * (shell-session.ts), else on a one-shot `shell:` socket (shell-socket.ts). Never throws.
 */
function shellCall(ctx: DeviceCtx, op: string, timeoutMs: number, commandLine: string, marker: string): Promise<CallOutcome<Buffer>> {
  const session = ctx.shells && ShellSession.accepts(commandLine) ? ctx.shells.of(ctx.serial) : undefined;
  return guardedCall(ctx, op, timeoutMs, () => {
    const sh = session && !session.busy ? session.exec(commandLine, marker) : shellSocket(ctx.cfg.host, ctx.cfg.port, ctx.serial, `${commandLine}\necho ${marker}`);
    return { handle: sh, work: () => sh.output };
  });
}

let endSeq = 0;
const END_TAG = `__FARM_END_${process.pid.toString(36)}_`;

/**
 * `shell:<commandLine>` (legacy shell, stdout and stderr as the device merges them), read to the end.
 * Legacy `shell:` has no exit status, so a device that vanishes mid-command would look like a command
 * that printed nothing: the driver appends an end marker on its own line (`\necho <marker>`) and, when
 * the stream ends without it, asks the server whether the device is still there (gone → adb_error;
 * still there → the command ended the shell itself, e.g. `exit`, and its output is returned).
 * Never throws.
 */
export async function shellExec(ctx: DeviceCtx, commandLine: string, timeoutMs: number, op = "shell"): Promise<ShellResult> {
  const t0 = performance.now();
  const marker = `${END_TAG}${++endSeq}__`;
  const tooBig = checkShellRequest(commandLine, `\necho ${marker}`.length);
  if (tooBig) return { status: "failed_precondition", message: `${op}: ${tooBig}`, stdout: "", durationMs: 0 };
  const r = await shellCall(ctx, op, timeoutMs, commandLine, marker);
  if (!r.ok) return { status: r.status, message: r.message, stdout: "", durationMs: r.durationMs };
  const text = r.value.toString("utf8");
  const at = text.lastIndexOf(marker);
  if (at >= 0 && /^\r?\n?$/.test(text.slice(at + marker.length))) return { status: "ok", message: "", stdout: text.slice(0, at), durationMs: performance.now() - t0 };
  // No end marker: did the device go away mid-command?
  const left = Math.max(1, Math.min(2000, timeoutMs - (performance.now() - t0)));
  const st = await stateCall(ctx, left);
  const durationMs = performance.now() - t0;
  if (st.ok && st.value === "device") return { status: "ok", message: "", stdout: text, durationMs };
  const rest = st.ok ? `is ${st.value}` : st.message.replace(/^device '[^']*' /, "");
  const why = rest.startsWith("is ") ? rest : `is ${rest}`;
  return {
    status: "adb_error",
    message: `device '${ctx.serial}' went away during \`${commandLine.slice(0, 80)}\` (its shell stream ended early; the device ${why})`,
    stdout: text,
    durationMs,
  };
}
