/** An error a dm_env_rpc request answers with (google.rpc.Status in the response), with its gRPC code. */
import { grpc } from "@farm/dm-env-rpc";

export class EnvError extends Error {
  constructor(
    readonly code: grpc.status,
    message: string,
  ) {
    super(message);
    this.name = "EnvError";
  }

  /** What a client may try again: no idle device now, or the server busy. */
  get retryable(): boolean {
    return this.code === grpc.status.RESOURCE_EXHAUSTED || this.code === grpc.status.UNAVAILABLE;
  }
}

export const invalid = (m: string) => new EnvError(grpc.status.INVALID_ARGUMENT, m);
export const precondition = (m: string) => new EnvError(grpc.status.FAILED_PRECONDITION, m);
