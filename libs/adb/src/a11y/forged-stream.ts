/**
 * Test support: a forwarder stream that is not the device's own, as anything reaching the hub could open one.
 * It dials `dialPort`, names `authorityPort` as the port it dialled (the client's word), sends `token` if given and
 * an empty forest; resolves with how the hub answered (`STATUS: details`, or `ended`).
 */
import { a11yGrpc, grpc, type ServerToClientMsg } from "@farm/a11y-grpc";
import { FORWARDER_TOKEN_METADATA } from "./forwarder-hub.ts";

type BidiClient = grpc.Client & { Bidi(md: grpc.Metadata): grpc.ClientDuplexStream<unknown, ServerToClientMsg> };

export async function forgeForwarderStream(dialPort: number, opts: { authorityPort?: number; token?: string } = {}): Promise<string> {
  const { A11yService } = a11yGrpc();
  const channel = opts.authorityPort === undefined ? {} : { "grpc.default_authority": `10.0.2.2:${opts.authorityPort}` };
  const client = new A11yService(`127.0.0.1:${dialPort}`, grpc.credentials.createInsecure(), channel) as unknown as BidiClient;
  const md = new grpc.Metadata();
  if (opts.token !== undefined) md.set(FORWARDER_TOKEN_METADATA, opts.token);
  const call = client.Bidi(md);
  call.write({ forest: { windows: [] } }); // an empty screen, should the stream be taken
  try {
    return await new Promise<string>((resolve) => {
      call.on("error", (e: grpc.ServiceError) => resolve(`${grpc.status[e.code]}: ${e.details}`));
      call.on("data", () => undefined);
      call.on("end", () => resolve("ended"));
    });
  } finally {
    client.close();
  }
}
