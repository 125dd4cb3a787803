/**
 * Device snapshots (save / load a whole emulator state by name): over the emulator's gRPC `SnapshotService`
 * when the device has an endpoint, else through the emulator console as `adb emu avd snapshot save|load NAME`
 * (the real adb CLI, which finds the console port from the serial and authenticates with the user's console
 * token). Trouble comes back as a status, like every device call.
 */
import { execFile } from "node:child_process";
import { report, type DeviceCtx } from "./exec.ts";
import { describeGrpcError, emulatorCalls } from "./grpc/client.ts";
import type { GrpcEndpoint } from "./grpc/endpoints.ts";
import type { StepResult } from "./types.ts";

export type SnapshotOp = "save" | "load";

/** A snapshot name: what the emulator accepts as a file name and a console argument. */
export const SNAPSHOT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

async function viaGrpc(ctx: DeviceCtx, ep: GrpcEndpoint, op: SnapshotOp, name: string, timeoutMs: number): Promise<StepResult> {
  const t0 = performance.now();
  const r = await emulatorCalls.snapshot(ep, op, name, timeoutMs);
  const durationMs = performance.now() - t0;
  if (!r.ok) {
    const d = describeGrpcError(r.err, `snapshot ${op} ${name}`, ctx.serial, ep);
    return { status: d.status, message: d.message, output: "", durationMs };
  }
  if (!r.value.success) {
    const why = Buffer.from(r.value.err ?? []).toString("utf8") || "no reason given";
    return { status: "internal_error", message: `snapshot ${op} ${name} on '${ctx.serial}' (emulator gRPC ${ep.address}) failed: ${why}`, output: "", durationMs };
  }
  return { status: "ok", message: "", output: "", durationMs };
}

function viaConsole(ctx: DeviceCtx, op: SnapshotOp, name: string, timeoutMs: number): Promise<StepResult> {
  const t0 = performance.now();
  const bin = ctx.cfg.adbBin;
  const args = ["-H", ctx.cfg.host, "-P", String(ctx.cfg.port), "-s", ctx.serial, "emu", "avd", "snapshot", op, name];
  return new Promise((resolve) => {
    execFile(bin, args, { timeout: timeoutMs, killSignal: "SIGKILL", maxBuffer: 1024 * 1024 }, (err, stdout, stderr) => {
      const durationMs = performance.now() - t0;
      const out = `${stdout}${stderr}`.trim();
      const where = `\`adb emu avd snapshot ${op} ${name}\` on '${ctx.serial}'`;
      if (err && (err as { killed?: boolean }).killed) resolve({ status: "timeout", message: `${where}: no answer within ${timeoutMs} ms`, output: out, durationMs });
      else if (/^KO\b/m.test(out)) resolve({ status: "internal_error", message: `${where}: ${out.split("\n").find((l) => l.startsWith("KO"))}`, output: out, durationMs });
      else if (err) resolve({ status: "adb_error", message: `${where}: ${out || err.message} (is it an emulator with a console?)`, output: out, durationMs });
      else resolve({ status: "ok", message: "", output: out, durationMs });
    });
  });
}

/** Saves or loads snapshot `name` of the device; reported as op `snapshot_save` / `snapshot_load`. */
export async function deviceSnapshot(ctx: DeviceCtx, ep: GrpcEndpoint | undefined, op: SnapshotOp, name: string, timeoutMs: number): Promise<StepResult & { via: "grpc" | "console" }> {
  const via = ep ? "grpc" : "console";
  let r: StepResult;
  if (!SNAPSHOT_NAME.test(name)) r = { status: "failed_precondition", message: `snapshot name ${JSON.stringify(name.slice(0, 80))}: 1-64 letters, digits, '.', '_', '-', starting with a letter or digit`, output: "", durationMs: 0 };
  else r = ep ? await viaGrpc(ctx, ep, op, name, timeoutMs) : await viaConsole(ctx, op, name, timeoutMs);
  report(ctx, `snapshot_${op}`, r.status, r.durationMs, r.message);
  return { ...r, via };
}
