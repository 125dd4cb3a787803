/** The emulator's `-grpc-use-token` scheme: every call carries `authorization: Bearer <token>`. */
import * as grpc from "@grpc/grpc-js";

/** Call metadata carrying the token, for clients. */
export function bearerMetadata(token: string): grpc.Metadata {
  const md = new grpc.Metadata();
  md.set("authorization", `Bearer ${token}`);
  return md;
}

/** The bearer token a call carries, or undefined (servers). */
export function tokenFromMetadata(md: grpc.Metadata): string | undefined {
  const v = md.get("authorization")[0];
  if (typeof v !== "string") return undefined;
  const m = /^Bearer\s+(.+)$/i.exec(v.trim());
  return m ? m[1] : undefined;
}
