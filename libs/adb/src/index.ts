/**
 * @module @farm/adb
 * The only code that talks to devices: discovery, step commands, action channel, logcat, app-screen check, screenshots.
 *
 *   const driver = new AdbDriver({ host: "127.0.0.1", port: 5037, logger });
 *   const dev = driver.device("emulator-5554");
 *   const r = await dev.execute({ timeoutSec: 0, cmd: { command: "get_current_activity" } });
 *   if (r.status !== "ok") …  // trouble is data, never thrown
 *
 * The public face only: the lib's own tests reach parsers, validators and protocol constants through
 * `@farm/adb/testing` (src/testing.ts), which no production code imports.
 */
export type * from "./types.ts";
export { AdbDriver, type AdbDriverOptions, type DeviceChange, type DeviceListEntry, type DeviceTracking } from "./driver.ts";
export { AdbDevice, type ActionChannelFactory } from "./device.ts";
export type { AdbDriverConfig, AdbCallEvent, AdbEvents, ResolvedAdbConfig } from "./config.ts";
/** The raw adbkit client (never starts an adb server) and a stream reader, for benchmarks and tools. */
export { createAdbClient, readAll, type AdbClient, type AdbDeviceClient } from "./client.ts";
export { GrpcActionChannel } from "./grpc/action-channel.ts";
/** The emulator's unary gRPC calls over the lean client, for benchmarks and tools. */
export { emulatorCalls } from "./grpc/client.ts";
export type { GrpcEndpoint, GrpcMode, GrpcTransportConfig } from "./grpc/endpoints.ts";
export { SNAPSHOT_NAME, type SnapshotOp } from "./snapshots.ts";
/** An in-memory Device for fast unit tests above the driver; passes the driver's conformance suite. */
export { FakeDevice, type FakeApp, type FakeAppContext, type FakeDeviceOptions } from "./fake-device.ts";
export { A11yForwarderHub, FORWARDER_PACKAGE, type ForestSource, type ForwarderHubOptions, type ForwarderRefusal } from "./a11y/forwarder-hub.ts";
export type { A11yConfig, ScreenTreeRequest } from "./a11y/read-tree.ts";
export { XmlRefused, type XmlRefusalCode } from "./a11y/xml.ts";
export { isScreenTree, type A11yNodeInfo, type A11yWindowInfo, type ProtoRect, type ScreenTree, type ScreenTreeEvent, type ScreenTreeFailure, type ScreenTreeOutcome, type ScreenTreeSourceName, type TreeLimits } from "./a11y/types.ts";
/** The text `input_text` may type (printable, bounded); the UI actuator checks an agent's text with it before anything is sent. */
export { checkInputText } from "./validate.ts";
