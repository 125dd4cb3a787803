/**
 * @module @farm/adb-wire
 * The adb server's host protocol, client side, written once: framing and replies (protocol.ts), one request per
 * connection (`host:version`, `host:devices`, `get-state`, `wait-for-any-device`, `host:emulator:`), device
 * services through `host:transport:` (shell, exec, framebuffer) and `host:track-devices`.
 *
 *   const devices = await listDevices({ host: "127.0.0.1", port: 5037 }, { timeoutMs: 2000 });
 *   const sock = openService(server, "emulator-5554", "shell:sh", { started, data, failed, ended });
 */
export { AdbWireError, type AdbWireErrorCode } from "./errors.ts";
export { MAX_REQUEST_BYTES, encodeRequest, parseDeviceList, takeLengthPrefixed, takeStatus, type Status } from "./protocol.ts";
export { deviceState, hostRequest, listDevices, registerEmulator, serverVersion, waitForDevice, type Expect, type RequestOptions, type ServerAddress } from "./host.ts";
export { openService, type ServiceHandlers } from "./service.ts";
export { trackDeviceLists, type DeviceListHandlers, type DeviceListTracking } from "./track.ts";
