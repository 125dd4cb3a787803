import { FarmError } from "@farm/errors";

/**
 * - `refused`: the server answered FAIL (its message follows: "device 'x' not found", "unknown host service"…)
 * - `unreachable`: no server at the address (the socket's own error is the cause, its errno in `errno`)
 * - `timeout`: no complete answer within the caller's deadline
 * - `closed`: the server closed the connection before the answer was complete
 * - `protocol`: an answer that is not the host protocol (not OKAY/FAIL, a bad hex length)
 * - `request_too_long`: a request over 65 535 bytes (the 4-hex-digit length cannot say more)
 * - `cancelled`: the caller's signal aborted the request
 */
export type AdbWireErrorCode = "refused" | "unreachable" | "timeout" | "closed" | "protocol" | "request_too_long" | "cancelled";

/** A host-protocol request that failed; the message names the server (host:port) and the request. */
export class AdbWireError extends FarmError<AdbWireErrorCode> {
  override readonly name = "AdbWireError";

  constructor(
    code: AdbWireErrorCode,
    message: string,
    /** The socket's errno code (`ECONNREFUSED`, `ECONNRESET`…) when a socket error caused it. */
    readonly errno?: string,
  ) {
    // A refused request (unknown service, device not found) fails the same way again; the rest may not.
    super(code, message, { retryable: code !== "refused" && code !== "request_too_long" && code !== "protocol" });
  }
}
