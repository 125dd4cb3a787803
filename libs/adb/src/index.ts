/**
 * @module @farm/adb
 * The only code that talks to devices: discovery, step commands, action channel, logcat, app-screen check, screenshots.
 *
 *   const driver = new AdbDriver({ host: "127.0.0.1", port: 5037, logger });
 *   const dev = driver.device("emulator-5554");
 *   const r = await dev.execute({ timeoutSec: 0, cmd: { command: "get_current_activity" } });
 *   if (r.status !== "ok") …  // trouble is data, never thrown
 */
export type * from "./types.ts";
export { AdbDriver, type AdbDriverOptions, type DeviceChange, type DeviceListEntry, type DeviceTracking } from "./driver.ts";
export { AdbDevice, type ActionChannelFactory } from "./device.ts";
export { resolveConfig, type AdbDriverConfig, type AdbCallEvent, type AdbEvents, type ResolvedAdbConfig } from "./config.ts";
export { ShellActionChannel } from "./action-channel.ts";
export { ShellLogcatStream, logcatCommandLine } from "./logcat.ts";
export { parseLogcatLine } from "./logcat-parse.ts";
export { buildDumpTree, findViewHierarchy, matchViewHierarchy } from "./app-screen.ts";
/** The task loader's Python-regex compiler, for building `AppScreen` view-hierarchy paths without a task file. */
export { pyRegex } from "@farm/task";
export { shQuote, shJoin, shSplit, ShellSyntaxError } from "@farm/shell-words";
export { quoteExtraArgs } from "./quote.ts";
export { parsePmList, parseCurrentActivity, findPinnableTask, parseOrientation, parseWmSize } from "./parsers.ts";
export { stepHandlers } from "./steps.ts";
export { checkPackage, checkActivity, expandActivity, checkInputText, checkShellRequest, splitForInput, ADB_REQUEST_MAX_BYTES, INPUT_TEXT_CHUNK_BYTES, INPUT_TEXT_MAX_CHARS } from "./validate.ts";
export { framebufferToRgba } from "./screenshot.ts";
/** The raw adbkit client (never starts an adb server) and a stream reader, for benchmarks and tools. */
export { createAdbClient, readAll, type AdbClient, type AdbDeviceClient } from "./client.ts";
export { GrpcActionChannel } from "./grpc/action-channel.ts";
export { INPUT_LIVENESS_MS } from "./grpc/input-stream.ts";
/** The emulator's unary gRPC calls over the lean client, for benchmarks and tools. */
export { emulatorCalls } from "./grpc/client.ts";
export { GrpcEndpoints, readDiscoveryFiles, type GrpcEndpoint, type GrpcMode, type GrpcTransportConfig } from "./grpc/endpoints.ts";
export { grpcKeyOf } from "./grpc/keys.ts";
export { SNAPSHOT_NAME, type SnapshotOp } from "./snapshots.ts";
/** An in-memory Device for fast unit tests above the driver; passes the driver's conformance suite. */
export { FakeDevice, type FakeApp, type FakeAppContext, type FakeDeviceOptions } from "./fake-device.ts";
export { A11yForwarderHub, FORWARDER_PACKAGE, FORWARDER_RECEIVER, FORWARDER_SERVICE, type ForestSource, type ForwarderHubOptions } from "./a11y/forwarder-hub.ts";
export { UIAUTOMATOR_COMMAND, type A11yConfig, type ScreenTreeRequest } from "./a11y/read-tree.ts";
export { parseUiautomatorXml, splitDumpOutput } from "./a11y/uiautomator-dump.ts";
export { XmlRefused, type XmlRefusalCode } from "./a11y/xml.ts";
export { DEFAULT_TREE_LIMITS, WINDOW_TYPES, isScreenTree, type A11yNodeInfo, type A11yWindowInfo, type ProtoRect, type ScreenTree, type ScreenTreeEvent, type ScreenTreeFailure, type ScreenTreeOutcome, type ScreenTreeSourceName, type TreeLimits } from "./a11y/types.ts";
