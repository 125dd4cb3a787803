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
}

export const invalid = (m: string) => new EnvError(grpc.status.INVALID_ARGUMENT, m);
export const precondition = (m: string) => new EnvError(grpc.status.FAILED_PRECONDITION, m);
