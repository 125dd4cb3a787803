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
import { fileURLToPath } from "node:url";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

export { grpc };
export * from "./messages.ts";
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

let loaded: DmEnvRpc | undefined;

export function dmEnvRpc(): DmEnvRpc {
  if (loaded) return loaded;
  const def = protoLoader.loadSync(PROTO_FILE, LOADER_OPTIONS);
  const pkg = grpc.loadPackageDefinition(def) as unknown as { dm_env_rpc: { v1: { Environment: grpc.ServiceClientConstructor } } };
  const Environment = pkg.dm_env_rpc.v1.Environment;
  loaded = { Environment, service: Environment.service };
  return loaded;
}

/** Call metadata with the token the worker asks for when bound beyond loopback (`authorization: Bearer …`). */
export function tokenMetadata(token: string): grpc.Metadata {
  const md = new grpc.Metadata();
  md.set("authorization", `Bearer ${token}`);
  return md;
}
