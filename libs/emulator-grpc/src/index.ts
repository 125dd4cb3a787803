/**
 * @module @farm/emulator-grpc
 * The Android emulator's gRPC interface (package `android.emulation.control`: `EmulatorController`,
 * `SnapshotService`) from our own `.proto` files, loaded once with @grpc/proto-loader, for a server
 * (the simulator) and for clients (the farm's gRPC device transport, tests, benchmarks).
 *
 *   const { EmulatorController, SnapshotService } = emulatorGrpc();
 *   const client = new EmulatorController(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), CLIENT_CHANNEL_OPTIONS);
 *   client.getStatus({}, (err, status) => …);
 *
 *   const server = new grpc.Server();
 *   server.addService(emulatorGrpc().services.emulatorController, handlers); // missing handlers → UNIMPLEMENTED
 */
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import type * as protoLoader from "@grpc/proto-loader";

export { grpc };
export * from "./messages.ts";
export { bearerMetadata, tokenFromMetadata } from "./auth.ts";
export { discoveryDirectory, discoveryFilePid, parseDiscovery, processAlive } from "./discovery.ts";

/** Folder holding our .proto files (emulator_controller.proto, snapshot_service.proto, snapshot.proto). */
export const PROTO_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../proto");
export const PROTO_FILES = ["emulator_controller.proto", "snapshot_service.proto"] as const;

/**
 * How messages look in JavaScript: field names as in the .proto (snake_case stays), enums as
 * numbers, 64-bit integers as JS numbers, absent fields filled with their defaults.
 */
export const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: Number,
  enums: Number,
  defaults: true,
  oneofs: false,
  includeDirs: [PROTO_DIR],
};

export interface EmulatorGrpc {
  /** Client constructors. */
  EmulatorController: grpc.ServiceClientConstructor;
  SnapshotService: grpc.ServiceClientConstructor;
  /** Service definitions for `grpc.Server.addService`. */
  services: {
    emulatorController: grpc.ServiceDefinition;
    snapshotService: grpc.ServiceDefinition;
  };
}

/**
 * Client channel options: no message size cap (a 1080x1920 RGBA screenshot is 8 MB, over grpc's
 * 4 MB default), as AndroidEnv sets for its emulator channel; and a 32 MB HTTP/2 receive window, so
 * a screenshot streams in one go instead of stalling every 64 KB for a WINDOW_UPDATE (gRPC C-core
 * clients grow their window by themselves; grpc-js keeps the 64 KB default unless told).
 */
export const CLIENT_CHANNEL_OPTIONS: grpc.ChannelOptions = {
  "grpc.max_receive_message_length": -1,
  "grpc.max_send_message_length": -1,
  "grpc-node.flow_control_window": 32 * 1024 * 1024,
};

/** @grpc/proto-loader (and protobufjs) when the protos are first loaded, not at import. */
function loadProtoLoader(): typeof protoLoader {
  return createRequire(import.meta.url)("@grpc/proto-loader") as typeof protoLoader;
}

let loaded: EmulatorGrpc | undefined;

/** Loads the protos once per process (a few ms) and returns the client constructors and service definitions. */
export function emulatorGrpc(): EmulatorGrpc {
  if (loaded) return loaded;
  const def = loadProtoLoader().loadSync(PROTO_FILES.map((f) => path.join(PROTO_DIR, f)), LOADER_OPTIONS);
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    android: { emulation: { control: Record<string, grpc.ServiceClientConstructor> } };
  };
  const ns = pkg.android.emulation.control;
  const EmulatorController = ns["EmulatorController"]!;
  const SnapshotService = ns["SnapshotService"]!;
  loaded = {
    EmulatorController,
    SnapshotService,
    services: { emulatorController: EmulatorController.service, snapshotService: SnapshotService.service },
  };
  return loaded;
}

/** Full method paths, e.g. `/android.emulation.control.EmulatorController/getStatus` (for logs and metrics). */
export const EMULATOR_CONTROLLER = "android.emulation.control.EmulatorController";
export const SNAPSHOT_SERVICE = "android.emulation.control.SnapshotService";
