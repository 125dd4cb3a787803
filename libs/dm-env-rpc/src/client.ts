/**
 * A small promise client for one `Process` stream: `request()` sends one EnvironmentRequest and resolves with
 * its response (responses come in order); an `error` response rejects with a DmEnvRpcError carrying the code.
 *
 *   const env = connectEnvironment("127.0.0.1:P");
 *   const { world_name } = (await env.request({ create_world: { settings: { task: tensor(DataType.STRING, ["classic_2048"]) } } })).create_world!;
 *   env.close();
 */
import * as grpc from "@grpc/grpc-js";
import type { EnvironmentRequest, EnvironmentResponse } from "./messages.ts";

export class DmEnvRpcError extends Error {
  /** UNAVAILABLE (14) and RESOURCE_EXHAUSTED (8) may succeed later (server back, a device freed); the rest will not. */
  get retryable(): boolean {
    return this.code === 14 || this.code === 8;
  }

  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = "DmEnvRpcError";
  }
}

export interface EnvironmentConnection {
  request(req: EnvironmentRequest): Promise<EnvironmentResponse>;
  /** Half-closes the stream and closes the channel. */
  close(): void;
  /** Drops the connection without a goodbye (a client that vanished). */
  cancel(): void;
}

export function openEnvironmentStream(client: grpc.Client & { Process(md?: grpc.Metadata): grpc.ClientDuplexStream<EnvironmentRequest, EnvironmentResponse> }, md?: grpc.Metadata): EnvironmentConnection {
  const call = md ? client.Process(md) : client.Process();
  const waiting: Array<{ resolve(r: EnvironmentResponse): void; reject(e: Error): void }> = [];
  let failed: Error | undefined;
  call.on("data", (res: EnvironmentResponse) => {
    const w = waiting.shift();
    if (!w) return;
    if (res.error) w.reject(new DmEnvRpcError(res.error.code, res.error.message));
    else w.resolve(res);
  });
  const fail = (e: Error) => {
    failed ??= e;
    for (const w of waiting.splice(0)) w.reject(e);
  };
  call.on("error", fail);
  call.on("end", () => fail(new Error("dm_env_rpc stream ended")));
  return {
    request(req) {
      if (failed) return Promise.reject(failed);
      return new Promise((resolve, reject) => {
        waiting.push({ resolve, reject });
        call.write(req);
      });
    },
    close() {
      call.end();
      client.close();
    },
    cancel() {
      call.cancel();
      client.close();
    },
  };
}
