/**
 * The calls the farm makes of an emulator's gRPC (EmulatorController: sendTouch, sendKey, getScreenshot,
 * getStatus, setVmState; SnapshotService: SaveSnapshot, LoadSnapshot) over the lean HTTP/2 client, with the messages
 * encoded by hand, and the mapping of gRPC errors to the driver's statuses (the same as adb trouble),
 * with the endpoint named.
 */
import {
  decodeEmulatorStatus, decodeImage, decodeSnapshotPackage, encodeImageFormat, encodeKeyboardEvent, encodeSnapshotRequest, encodeTouchEvent, encodeVmRunState,
} from "@farm/emulator-grpc/wire";
import type { EmulatorStatusMsg, ImageMsg, ImageTransportMsg, KeyboardEventMsg, SnapshotPackageMsg, TouchEventMsg } from "@farm/emulator-grpc";
import type { StepStatus } from "../types.ts";
import type { GrpcEndpoint } from "./endpoints.ts";
import { GrpcCode, h2Client, type GrpcFailure } from "./h2-client.ts";

export { dropH2Client as dropClient, GrpcCode, type GrpcFailure } from "./h2-client.ts";

const CONTROLLER = "/android.emulation.control.EmulatorController/";
const SNAPSHOTS = "/android.emulation.control.SnapshotService/";

export type Answer<T> = { ok: true; value: T } | { ok: false; err: GrpcFailure };

async function unary<T>(ep: GrpcEndpoint, path: string, body: Uint8Array, timeoutMs: number, decode: (b: Uint8Array) => T): Promise<Answer<T>> {
  const r = await h2Client(ep).call(path, body, ep, timeoutMs);
  if (!r.ok) return r;
  const msg = r.messages[0];
  if (r.messages.length !== 1 || !msg) return { ok: false, err: { code: GrpcCode.INTERNAL, details: `${r.messages.length} messages in a unary answer` } };
  try {
    return { ok: true, value: decode(msg) };
  } catch (e) {
    return { ok: false, err: { code: GrpcCode.INTERNAL, details: `undecodable answer: ${e instanceof Error ? e.message : String(e)}` } };
  }
}

const empty = (): null => null;
const NO_BODY = new Uint8Array(0);

export const emulatorCalls = {
  sendTouch: (ep: GrpcEndpoint, msg: TouchEventMsg, timeoutMs: number) => unary(ep, `${CONTROLLER}sendTouch`, encodeTouchEvent(msg), timeoutMs, empty),
  sendKey: (ep: GrpcEndpoint, msg: KeyboardEventMsg, timeoutMs: number) => unary(ep, `${CONTROLLER}sendKey`, encodeKeyboardEvent(msg), timeoutMs, empty),
  getScreenshot: (ep: GrpcEndpoint, fmt: { format: number; width?: number; height?: number; transport?: ImageTransportMsg }, timeoutMs: number): Promise<Answer<ImageMsg>> =>
    unary(ep, `${CONTROLLER}getScreenshot`, encodeImageFormat(fmt), timeoutMs, decodeImage),
  getStatus: (ep: GrpcEndpoint, timeoutMs: number): Promise<Answer<EmulatorStatusMsg>> => unary(ep, `${CONTROLLER}getStatus`, NO_BODY, timeoutMs, decodeEmulatorStatus),
  setVmState: (ep: GrpcEndpoint, state: number, timeoutMs: number) => unary(ep, `${CONTROLLER}setVmState`, encodeVmRunState({ state }), timeoutMs, empty),
  snapshot: (ep: GrpcEndpoint, op: "save" | "load", name: string, timeoutMs: number): Promise<Answer<SnapshotPackageMsg>> =>
    unary(ep, `${SNAPSHOTS}${op === "save" ? "SaveSnapshot" : "LoadSnapshot"}`, encodeSnapshotRequest({ snapshot_id: name }), timeoutMs, decodeSnapshotPackage),
};

const CODE_NAMES = Object.fromEntries(Object.entries(GrpcCode).map(([k, v]) => [v, k])) as Record<number, string>;

/** A gRPC failure as the driver's status and a message naming the call and the endpoint. */
export function describeGrpcError(err: GrpcFailure, what: string, serial: string, ep: GrpcEndpoint): { status: StepStatus; message: string } {
  const where = `${what} on '${serial}' (emulator gRPC ${ep.address})`;
  const detail = err.details;
  switch (err.code) {
    case GrpcCode.DEADLINE_EXCEEDED:
      return { status: "timeout", message: `${where}: no answer within the deadline` };
    case GrpcCode.UNAVAILABLE:
    case GrpcCode.CANCELLED:
      return { status: "adb_error", message: `${where}: endpoint unavailable (${detail}); the emulator may be gone` };
    case GrpcCode.UNAUTHENTICATED:
    case GrpcCode.PERMISSION_DENIED:
      return { status: "adb_error", message: `${where}: refused (${detail}); check the gRPC token for this device` };
    case GrpcCode.UNIMPLEMENTED:
      return { status: "unknown_command", message: `${where}: not implemented by this emulator` };
    case GrpcCode.INVALID_ARGUMENT:
      return { status: "failed_precondition", message: `${where}: ${detail}` };
    default:
      return { status: "internal_error", message: `${where}: ${Object.hasOwn(CODE_NAMES, err.code) ? CODE_NAMES[err.code] : err.code}: ${detail}` };
  }
}
