/**
 * gRPC clients of the emulator's EmulatorController, one per endpoint and shared, and the mapping of gRPC
 * errors to the driver's statuses (the same as adb trouble), with the endpoint named.
 */
import { bearerMetadata, emulatorGrpc, grpc } from "@farm/emulator-grpc";
import type { StepStatus } from "../types.ts";
import type { GrpcEndpoint } from "./endpoints.ts";

export type UnaryCall<Req, Res> = (req: Req, md: grpc.Metadata, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res: Res) => void) => grpc.ClientUnaryCall;

export interface ControllerClient extends grpc.Client {
  [method: string]: unknown;
}

const clients = new Map<string, ControllerClient>();

/** The shared client of an endpoint (HTTP/2 to loopback; the channel reconnects by itself). */
export function controllerClient(ep: GrpcEndpoint): ControllerClient {
  let c = clients.get(ep.address);
  if (!c) {
    const { EmulatorController } = emulatorGrpc();
    c = new EmulatorController(ep.address, grpc.credentials.createInsecure(), {
      "grpc.max_receive_message_length": 256 * 1024 * 1024,
      "grpc.enable_retries": 0,
    }) as unknown as ControllerClient;
    clients.set(ep.address, c);
  }
  return c;
}

/** Forgets and closes an endpoint's client (its emulator went away). */
export function dropClient(address: string): void {
  const c = clients.get(address);
  clients.delete(address);
  c?.close();
}

const EMPTY = new grpc.Metadata();
const tokenMetadata = new Map<string, grpc.Metadata>();

/** The call metadata of an endpoint (its bearer token, if any); built once, as calls only read it. */
export function metadataOf(ep: GrpcEndpoint): grpc.Metadata {
  if (!ep.token) return EMPTY;
  let md = tokenMetadata.get(ep.token);
  if (!md) {
    md = bearerMetadata(ep.token);
    if (tokenMetadata.size > 1024) tokenMetadata.clear();
    tokenMetadata.set(ep.token, md);
  }
  return md;
}

/** One unary call with a deadline; resolves with the answer or the error (never rejects). */
export function unary<Req, Res>(client: ControllerClient, method: string, ep: GrpcEndpoint, req: Req, timeoutMs: number): Promise<{ ok: true; value: Res } | { ok: false; err: grpc.ServiceError }> {
  return new Promise((resolve) => {
    const fn = client[method] as UnaryCall<Req, Res> | undefined;
    if (typeof fn !== "function") {
      resolve({ ok: false, err: Object.assign(new Error(`no method ${method}`), { code: grpc.status.UNIMPLEMENTED, details: `no method ${method}`, metadata: new grpc.Metadata() }) });
      return;
    }
    fn.call(client, req, metadataOf(ep), { deadline: Date.now() + timeoutMs }, (err, res) => resolve(err ? { ok: false, err } : { ok: true, value: res }));
  });
}

/** A gRPC failure as the driver's status and a message naming the call and the endpoint. */
export function describeGrpcError(err: grpc.ServiceError, what: string, serial: string, ep: GrpcEndpoint): { status: StepStatus; message: string } {
  const where = `${what} on '${serial}' (emulator gRPC ${ep.address})`;
  const detail = err.details || err.message;
  switch (err.code) {
    case grpc.status.DEADLINE_EXCEEDED:
      return { status: "timeout", message: `${where}: no answer within the deadline` };
    case grpc.status.UNAVAILABLE:
    case grpc.status.CANCELLED:
      return { status: "adb_error", message: `${where}: endpoint unavailable (${detail}); the emulator may be gone` };
    case grpc.status.UNAUTHENTICATED:
    case grpc.status.PERMISSION_DENIED:
      return { status: "adb_error", message: `${where}: refused (${detail}); check the gRPC token for this device` };
    case grpc.status.UNIMPLEMENTED:
      return { status: "unknown_command", message: `${where}: not implemented by this emulator` };
    case grpc.status.INVALID_ARGUMENT:
      return { status: "failed_precondition", message: `${where}: ${detail}` };
    default:
      return { status: "internal_error", message: `${where}: ${grpc.status[err.code] ?? err.code}: ${detail}` };
  }
}
