/**
 * `Device.screenTree`: the forwarder when it serves the device (config `a11y.forwarder`), else
 * `adb exec-out uiautomator dump /dev/tty` on a plain socket, read up to `maxBytes` (a device that keeps
 * writing is cut off and refused), under the call's deadline. Never throws.
 */
import { guardedCall, type DeviceCtx } from "../exec.ts";
import { openService } from "@farm/adb-wire";
import type { ForestSource } from "./forwarder-hub.ts";
import type { ScreenTree, ScreenTreeFailure, ScreenTreeSourceName, TreeLimits } from "./types.ts";
import { DEFAULT_TREE_LIMITS } from "./types.ts";
import { parseUiautomatorXml, splitDumpOutput } from "./uiautomator-dump.ts";
import { XmlRefused } from "./xml.ts";

export const UIAUTOMATOR_COMMAND = "uiautomator dump /dev/tty";
/** Room for the tool's closing line after the XML. */
const MESSAGE_ROOM = 512;

export interface A11yConfig {
  /** Where forests come from when the device's forwarder is on (an A11yForwarderHub). */
  forwarder?: ForestSource;
  limits?: Partial<TreeLimits>;
  /** Deadline of one read. Default 15000 (uiautomator waits up to 10 s for an idle screen). */
  timeoutMs?: number;
}

export interface ScreenTreeRequest {
  timeoutMs?: number;
  /** `auto` (default): the forwarder when it serves the device, else uiautomator. */
  source?: "auto" | ScreenTreeSourceName;
}

export function resolveLimits(c: A11yConfig | undefined): TreeLimits {
  const l: TreeLimits = Object.assign({}, DEFAULT_TREE_LIMITS, c?.limits);
  for (const [k, v] of Object.entries(l)) if (!(Number.isSafeInteger(v) && v > 0)) throw new RangeError(`adb config: a11y.limits.${k} must be a positive integer, got ${String(v)}`);
  return l;
}

export async function readScreenTree(ctx: DeviceCtx, a11y: A11yConfig | undefined, req: ScreenTreeRequest = {}): Promise<ScreenTree | ScreenTreeFailure> {
  const t0 = performance.now();
  const limits = resolveLimits(a11y);
  const timeoutMs = req.timeoutMs ?? a11y?.timeoutMs ?? 15_000;
  const fw = a11y?.forwarder;
  const useForwarder = req.source === "forwarder" || (req.source !== "uiautomator" && fw?.serves(ctx.serial) === true);
  let r: Omit<ScreenTree, "durationMs"> | ScreenTreeFailure;
  if (useForwarder) r = fw ? await fw.read(ctx.serial, timeoutMs, limits) : failure("forwarder", "failed", "failed_precondition", "no accessibility forwarder hub is configured (a11y.forwarder)");
  else r = await viaUiautomator(ctx, timeoutMs, limits);
  const durationMs = performance.now() - t0;
  const done = Object.assign(r, { durationMs }); // r is ours; a spread-first literal that adds a key is ~1 µs on Node 20
  const ok = "windows" in done;
  try {
    ctx.cfg.events.onScreenTree?.({ serial: ctx.serial, source: done.source, outcome: ok ? "ok" : done.outcome, durationMs, nodes: ok ? done.nodeCount : 0, bytes: ok ? done.bytes : 0 });
  } catch {
    // a metrics hook must never break a device call
  }
  return done;
}

async function viaUiautomator(ctx: DeviceCtx, timeoutMs: number, limits: TreeLimits): Promise<Omit<ScreenTree, "durationMs"> | ScreenTreeFailure> {
  const cap = limits.maxBytes + MESSAGE_ROOM;
  const r = await guardedCall(ctx, "uiautomator:dump", timeoutMs, () => {
    const x = execOutBounded(ctx.cfg.host, ctx.cfg.port, ctx.serial, UIAUTOMATOR_COMMAND, cap);
    return { handle: x, work: () => x.output };
  });
  if (!r.ok) return failure("uiautomator", r.status === "timeout" ? "timeout" : r.status === "adb_error" ? "adb_error" : "failed", r.status === "ok" ? "internal_error" : r.status, r.message);
  const { bytes, over } = r.value;
  if (over) return failure("uiautomator", "refused", "internal_error", `uiautomator dump of '${ctx.serial}' went past ${limits.maxBytes} bytes; cut off and refused (raise a11y.limits.maxBytes if the screen is really that large)`);
  try {
    const split = splitDumpOutput(bytes);
    if (split.kind === "not_idle") return failure("uiautomator", "not_idle", "internal_error", `uiautomator on '${ctx.serial}': the screen did not settle (ERROR: could not get idle state.); try again once animations end`);
    if (split.kind === "tool_error") return failure("uiautomator", "failed", "internal_error", `uiautomator on '${ctx.serial}' failed: ${split.message}`);
    return Object.assign(parseUiautomatorXml(split.xml, limits), { bytes: bytes.length });
  } catch (e) {
    if (e instanceof XmlRefused) return failure("uiautomator", "refused", "internal_error", `uiautomator dump of '${ctx.serial}' refused (${e.code}): ${e.message}`);
    return failure("uiautomator", "failed", "internal_error", `uiautomator dump of '${ctx.serial}': ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** `exec:<command>` read to its end or to `maxBytes` (then the connection is dropped and `over` set). */
function execOutBounded(host: string, port: number, serial: string, command: string, maxBytes: number): { output: Promise<{ bytes: Buffer; over: boolean }>; destroy(): void } {
  let settle!: { resolve(v: { bytes: Buffer; over: boolean }): void; reject(e: Error): void };
  const output = new Promise<{ bytes: Buffer; over: boolean }>((resolve, reject) => (settle = { resolve, reject }));
  const chunks: Buffer[] = [];
  let size = 0;
  let done = false;
  const finish = (over: boolean, e?: Error): void => {
    if (done) return;
    done = true;
    if (e) settle.reject(e);
    else settle.resolve({ bytes: Buffer.concat(chunks, Math.min(size, maxBytes)), over });
    if (e || over) sock.destroy();
  };
  const sock = openService({ host, port }, serial, `exec:${command}`, {
    started: () => undefined,
    data: (b) => {
      if (done) return;
      const room = maxBytes - size;
      chunks.push(b.length > room ? b.subarray(0, Math.max(0, room)) : b);
      size += b.length;
      if (size > maxBytes) finish(true);
    },
    failed: (e) => finish(false, e),
    ended: () => finish(false),
  });
  return { output, destroy: () => finish(false, new Error("connection dropped at the deadline")) };
}

function failure(source: ScreenTreeSourceName, outcome: ScreenTreeFailure["outcome"], status: ScreenTreeFailure["status"], message: string): ScreenTreeFailure {
  return { status, message, output: "", durationMs: 0, outcome, source };
}
