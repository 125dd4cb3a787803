/**
 * @module @farm/a11y-grpc
 * AndroidEnv's accessibility protocol (package `android_env`, service `A11yService`) from our own
 * `.proto` files, loaded once with @grpc/proto-loader: the host serves it (AndroidEnv's
 * A11yGrpcWrapper, the farm's driver), the forwarder app on the device is its client.
 *
 *   const { A11yService, service } = a11yGrpc();
 *   const server = new grpc.Server();
 *   server.addService(service, { Bidi: (call) => …, SendForest: …, SendEvent: … });
 *   const client = new A11yService("127.0.0.1:P", grpc.credentials.createInsecure(), CLIENT_CHANNEL_OPTIONS);
 *   const bidi = client.Bidi(); bidi.on("data", (m: ServerToClientMsg) => …); bidi.write({ forest });
 */
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import type * as protoLoader from "@grpc/proto-loader";

export { grpc };
export * from "./messages.ts";

/** Include root of our .proto files: they import each other as `android_env/proto/a11y/<file>`, as the published ones do. */
export const PROTO_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../proto");
/** The service's file, relative to PROTO_DIR (the others come in through its imports). */
export const SERVICE_PROTO = "android_env/proto/a11y/a11y.proto";
/** Every file, relative to PROTO_DIR (what `protoc` needs to generate stubs for all messages). */
export const PROTO_FILES = [
  "android_env/proto/a11y/a11y.proto",
  "android_env/proto/a11y/android_accessibility_action.proto",
  "android_env/proto/a11y/android_accessibility_forest.proto",
  "android_env/proto/a11y/android_accessibility_node_info.proto",
  "android_env/proto/a11y/android_accessibility_node_info_clickable_span.proto",
  "android_env/proto/a11y/android_accessibility_tree.proto",
  "android_env/proto/a11y/android_accessibility_window_info.proto",
  "android_env/proto/a11y/rect.proto",
] as const;

/**
 * How messages look in JavaScript: field names as in the .proto, enums and 64-bit integers as
 * numbers, absent fields filled with defaults, and a `payload` field naming the oneof member set.
 */
export const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: Number,
  enums: Number,
  defaults: true,
  oneofs: true,
  includeDirs: [PROTO_DIR],
};

/**
 * Channel options for either side: no message size cap, because a forest of a busy screen can pass
 * grpc's 4 MB default (AndroidEnv's server lifts it too); bounds against hostile peers are the
 * reader's job (it checks sizes and depth after decoding).
 */
export const CLIENT_CHANNEL_OPTIONS: grpc.ChannelOptions = {
  "grpc.max_receive_message_length": -1,
  "grpc.max_send_message_length": -1,
};

export interface A11yGrpc {
  /** Client constructor (what the forwarder on the device uses). */
  A11yService: grpc.ServiceClientConstructor;
  /** Service definition for `grpc.Server.addService` (what the host serves). */
  service: grpc.ServiceDefinition;
}

/** @grpc/proto-loader (and protobufjs) when the protos are first loaded, not at import. */
function loadProtoLoader(): typeof protoLoader {
  return createRequire(import.meta.url)("@grpc/proto-loader") as typeof protoLoader;
}

let loaded: A11yGrpc | undefined;

/** Loads the protos once per process and returns the client constructor and service definition. */
export function a11yGrpc(): A11yGrpc {
  if (loaded) return loaded;
  const def = loadProtoLoader().loadSync(path.join(PROTO_DIR, SERVICE_PROTO), LOADER_OPTIONS);
  const pkg = grpc.loadPackageDefinition(def) as unknown as { android_env: Record<string, grpc.ServiceClientConstructor> };
  const A11yService = pkg.android_env["A11yService"]!;
  loaded = { A11yService, service: A11yService.service };
  return loaded;
}
