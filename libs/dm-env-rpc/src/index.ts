/**
 * @module @farm/dm-env-rpc
 * DeepMind's dm_env_rpc v1 wire format (service `dm_env_rpc.v1.Environment`, one bidirectional `Process`
 * stream) from our own `.proto` files, loaded once with @grpc/proto-loader, for the worker's server and for
 * clients (tests, benchmarks). Python clients compile the same files (PROTO_ROOT) with protoc.
 *
 *   const { Environment, service } = dmEnvRpc();
 *   server.addService(service, { Process: (call) => … });
 *   const stream = new Environment("127.0.0.1:P", grpc.credentials.createInsecure()).Process();
 */
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import type * as protoLoader from "@grpc/proto-loader";

export { grpc };
export * from "./messages.ts";
export { DmEnvRpcError, type EnvironmentConnection } from "./client.ts";
import { openEnvironmentStream, type EnvironmentConnection } from "./client.ts";
export { tensor, payloadOf, payloadName, numbers, scalarNumber, scalarString } from "./tensor.ts";

/** Include root of our protos: `dm_env_rpc/v1/dm_env_rpc.proto`, `google/rpc/status.proto`. */
export const PROTO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../proto");
export const PROTO_FILE = "dm_env_rpc/v1/dm_env_rpc.proto";

export const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: Number,
  enums: Number,
  defaults: false,
  arrays: true,
  objects: true,
  oneofs: true,
  includeDirs: [PROTO_ROOT],
};

/** No message size cap: a 1080x1920 RGB frame is 6 MB, over gRPC's 4 MB default. */
export const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  "grpc.max_receive_message_length": -1,
  "grpc.max_send_message_length": -1,
  "grpc-node.flow_control_window": 32 * 1024 * 1024,
};

export interface DmEnvRpc {
  Environment: grpc.ServiceClientConstructor;
  service: grpc.ServiceDefinition;
}

/** @grpc/proto-loader (and protobufjs) when the protos are first loaded, not at import. */
function loadProtoLoader(): typeof protoLoader {
  return createRequire(import.meta.url)("@grpc/proto-loader") as typeof protoLoader;
}

let loaded: DmEnvRpc | undefined;

export function dmEnvRpc(): DmEnvRpc {
  if (loaded) return loaded;
  const def = loadProtoLoader().loadSync(PROTO_FILE, LOADER_OPTIONS);
  const pkg = grpc.loadPackageDefinition(def) as unknown as { dm_env_rpc: { v1: { Environment: grpc.ServiceClientConstructor } } };
  const original = pkg.dm_env_rpc.v1.Environment.service;
  const process = original.Process!;
  // protobufjs hands 64-bit map keys (action and observation ids) over as 8-char "long hashes": decimal strings instead.
  const service: grpc.ServiceDefinition = {
    Process: {
      ...process,
      requestDeserialize: (b: Buffer) => decimalUint64Keys(process.requestDeserialize(b)),
      responseDeserialize: (b: Buffer) => decimalUint64Keys(process.responseDeserialize(b)),
    },
  };
  loaded = { Environment: grpc.makeGenericClientConstructor(service, "Environment"), service };
  return loaded;
}

/** A protobufjs long hash (8 chars, the 8 little-endian bytes) as a decimal string; other keys unchanged. */
function decimalKey(k: string): string {
  if (k.length !== 8 || /^[0-9]+$/.test(k)) return k;
  let lo = 0;
  let hi = 0;
  for (let i = 0; i < 4; i++) lo += k.charCodeAt(i) * 2 ** (8 * i);
  for (let i = 0; i < 4; i++) hi += k.charCodeAt(4 + i) * 2 ** (8 * i);
  return String(hi * 2 ** 32 + lo);
}

const UINT64_MAPS = new Set(["actions", "observations"]);

/** Rewrites the keys of the uint64-keyed maps (`actions`, `observations`) anywhere in a decoded message. */
function decimalUint64Keys<T>(msg: T): T {
  const walk = (o: unknown): void => {
    if (!o || typeof o !== "object" || Array.isArray(o) || ArrayBuffer.isView(o)) return;
    const rec = o as Record<string, unknown>;
    for (const [k, v] of Object.entries(rec)) {
      if (UINT64_MAPS.has(k) && v && typeof v === "object" && !Array.isArray(v)) {
        const fixed: Record<string, unknown> = {};
        for (const [mk, mv] of Object.entries(v as Record<string, unknown>)) fixed[decimalKey(mk)] = mv;
        rec[k] = fixed;
      } else walk(v);
    }
  };
  walk(msg);
  return msg;
}

/** Call metadata with the token the worker asks for when bound beyond loopback (`authorization: Bearer …`). */
export function tokenMetadata(token: string): grpc.Metadata {
  const md = new grpc.Metadata();
  md.set("authorization", `Bearer ${token}`);
  return md;
}

/** One `Process` stream to `target` (host:port), with the token when given. */
export function connectEnvironment(target: string, opts: { token?: string } = {}): EnvironmentConnection {
  const client = new (dmEnvRpc().Environment)(target, grpc.credentials.createInsecure(), CHANNEL_OPTIONS);
  return openEnvironmentStream(client as never, opts.token ? tokenMetadata(opts.token) : undefined);
}
