/**
 * @module @farm/adb/testing
 * The driver's internals that its own tests check one by one (parsers, validators, step handlers, protocol
 * constants); not part of the public API (`@farm/adb`), and imported by no production code.
 */
export { resolveConfig } from "./config.ts";
export { ShellActionChannel } from "./action-channel.ts";
export { logcatCommandLine } from "./logcat.ts";
export { parseLogcatLine } from "./logcat-parse.ts";
export { buildDumpTree, matchViewHierarchy } from "./app-screen.ts";
export { quoteExtraArgs } from "./quote.ts";
export { parsePmList, parseCurrentActivity, findPinnableTask, parseOrientation, parseWmSize } from "./parsers.ts";
export { stepHandlers } from "./steps.ts";
export { checkPackage, checkActivity, checkShellRequest, ADB_REQUEST_MAX_BYTES, INPUT_TEXT_CHUNK_BYTES, INPUT_TEXT_MAX_CHARS } from "./validate.ts";
export { framebufferToRgba } from "./screenshot.ts";
export { INPUT_LIVENESS_MS } from "./grpc/input-stream.ts";
export { readDiscoveryFiles } from "./grpc/endpoints.ts";
export { grpcKeyOf } from "./grpc/keys.ts";
export { forgeForwarderStream } from "./a11y/forged-stream.ts";
export { parseUiautomatorXml, splitDumpOutput } from "./a11y/uiautomator-dump.ts";
export { DEFAULT_TREE_LIMITS } from "./a11y/types.ts";
export { inputTextPieces } from "./quote.ts";
