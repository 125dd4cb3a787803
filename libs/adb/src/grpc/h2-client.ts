/**
 * A lean gRPC client over node:http2 for the few calls the farm makes of an emulator. Why not grpc-js:
 * measured, grpc-js spends about 1 ms of CPU per unary call (channel/call-stack machinery, reflection
 * encoding), more than the whole action it carries; this client is one HTTP/2 stream per call on one
 * long-lived session per endpoint, with hand-encoded messages (`@farm/emulator-grpc` wire.ts).
 * gRPC over HTTP/2 as specified: POST /<service>/<method>, `content-type: application/grpc`,
 * `te: trailers`, `grpc-timeout`, `authorization: Bearer <token>`; the status from `grpc-status` in the
 * trailers (or headers, for a trailers-only answer). A call never rejects: it resolves with the answer
 * or a gRPC status (DEADLINE_EXCEEDED when its deadline passes, UNAVAILABLE when the endpoint cannot be
 * reached or goes away).
 */
import http2 from "node:http2";
import { grpcFrame, grpcMessages } from "@farm/emulator-grpc/wire";
import type { GrpcEndpoint } from "./endpoints.ts";

/** gRPC status codes (the gRPC spec's numbers). */
export const GrpcCode = {
  OK: 0, CANCELLED: 1, UNKNOWN: 2, INVALID_ARGUMENT: 3, DEADLINE_EXCEEDED: 4, NOT_FOUND: 5, ALREADY_EXISTS: 6, PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8, FAILED_PRECONDITION: 9, ABORTED: 10, OUT_OF_RANGE: 11, UNIMPLEMENTED: 12, INTERNAL: 13, UNAVAILABLE: 14,
  DATA_LOSS: 15, UNAUTHENTICATED: 16,
} as const;

export interface GrpcFailure {
  code: number;
  details: string;
}

export type CallResult = { ok: true; messages: Buffer[] } | { ok: false; err: GrpcFailure };

/** The caller's side of a client-streaming call. */
export interface ClientStream {
  /** The call's end: the answer, or why it failed (it never rejects). */
  readonly result: Promise<CallResult>;
  /** True once the call is over (answered, failed or the connection gone). */
  readonly ended: boolean;
  /** True once the server sent its response headers (it accepted the call). */
  readonly answered: boolean;
  /** Resolves true when the server's response headers arrive, false if the call ends without them. */
  readonly accepted: Promise<boolean>;
  /** Bytes written but not yet taken by the connection (a server that stops reading makes this grow). */
  readonly buffered: number;
  /** Writes gRPC-framed messages; false when the call is over. */
  write(framed: Uint8Array): boolean;
  /** Ends the caller's side; the server answers. */
  end(): void;
}

const { HTTP2_HEADER_METHOD, HTTP2_HEADER_PATH, HTTP2_HEADER_CONTENT_TYPE, HTTP2_HEADER_TE, HTTP2_HEADER_STATUS } = http2.constants;

/** The message of a `grpc-message` header (percent-encoded per the spec). */
function grpcMessage(v: unknown): string {
  if (typeof v !== "string") return "";
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
}

/** An HTTP status without gRPC status, as the spec maps it. */
function httpToGrpc(status: number): number {
  if (status === 401) return GrpcCode.UNAUTHENTICATED;
  if (status === 403) return GrpcCode.PERMISSION_DENIED;
  if (status === 404) return GrpcCode.UNIMPLEMENTED;
  if (status === 429 || status === 502 || status === 503 || status === 504) return GrpcCode.UNAVAILABLE;
  return GrpcCode.UNKNOWN;
}

/** One long-lived HTTP/2 session to an endpoint, reopened on the next call after it closes. */
export class GrpcH2Client {
  private session: http2.ClientHttp2Session | undefined;
  private closed = false;

  constructor(readonly address: string) {}

  private connect(): http2.ClientHttp2Session {
    if (this.session && !this.session.closed && !this.session.destroyed) return this.session;
    const s = http2.connect(`http://${this.address}`, {
      // A screenshot (8 MB at 1080x1920) streams without stalling for WINDOW_UPDATEs.
      settings: { initialWindowSize: 16 * 1024 * 1024, maxFrameSize: 16 * 1024 * 1024 - 1, enablePush: false },
    });
    s.on("connect", () => s.setLocalWindowSize?.(32 * 1024 * 1024));
    s.on("error", () => undefined); // surfaces on the streams; the session is dropped on close
    s.on("close", () => {
      if (this.session === s) this.session = undefined;
    });
    s.on("goaway", () => {
      if (this.session === s) this.session = undefined;
    });
    s.unref(); // an idle session does not keep the process alive
    this.session = s;
    return s;
  }

  /**
   * One call: sends `body` (an encoded request message) to `path` and collects the answer's messages
   * (one for unary, several for a server stream ended by the server). Never rejects.
   */
  call(path: string, body: Uint8Array, ep: GrpcEndpoint, timeoutMs: number): Promise<CallResult> {
    return new Promise((resolve) => {
      const req = this.start(path, ep, timeoutMs, resolve);
      req?.end(grpcFrame(body));
    });
  }

  /**
   * A client-streaming call (no deadline: it lives as long as the caller keeps it): messages are written
   * as they come; `result` resolves when the call ends (the server's answer, or why it failed).
   */
  openStream(path: string, ep: GrpcEndpoint): ClientStream {
    let resolveResult!: (r: CallResult) => void;
    const result = new Promise<CallResult>((r) => (resolveResult = r));
    let ended = false;
    let answered = false;
    let accept!: (yes: boolean) => void;
    const accepted = new Promise<boolean>((r) => (accept = r));
    // Declared first: `done` may run before start() returns (a client closed, a connection refused at once).
    let req: http2.ClientHttp2Stream | undefined;
    req = this.start(path, ep, undefined, (r) => {
      ended = true;
      accept(false);
      resolveResult(r);
      // The server has answered: our side of the stream has nothing more to say.
      if (req && !req.closed) req.close();
    }, () => {
      answered = true;
      accept(true);
    });
    if (!req) ended = true;
    return {
      result,
      accepted,
      get ended() {
        return ended;
      },
      get answered() {
        return answered;
      },
      get buffered() {
        return req?.writableLength ?? 0;
      },
      write(messages: Uint8Array) {
        if (ended || !req || req.writableEnded) return false;
        req.write(messages);
        return true;
      },
      end() {
        if (req && !req.writableEnded) req.end();
      },
    };
  }

  /** Opens the HTTP/2 stream of a call and collects its answer; undefined (after `done`) when it cannot start. */
  private start(path: string, ep: GrpcEndpoint, timeoutMs: number | undefined, done: (r: CallResult) => void, onHeaders?: () => void): http2.ClientHttp2Stream | undefined {
    if (this.closed) {
      done({ ok: false, err: { code: GrpcCode.UNAVAILABLE, details: "client closed" } });
      return undefined;
    }
    const headers: http2.OutgoingHttpHeaders = {
      [HTTP2_HEADER_METHOD]: "POST",
      [HTTP2_HEADER_PATH]: path,
      [HTTP2_HEADER_CONTENT_TYPE]: "application/grpc",
      [HTTP2_HEADER_TE]: "trailers",
    };
    if (timeoutMs !== undefined) headers["grpc-timeout"] = `${Math.max(1, Math.ceil(timeoutMs))}m`;
    if (ep.token) headers["authorization"] = `Bearer ${ep.token}`;
    let req: http2.ClientHttp2Stream;
    try {
      req = this.connect().request(headers, { endStream: false });
    } catch (e) {
      this.session = undefined;
      done({ ok: false, err: { code: GrpcCode.UNAVAILABLE, details: e instanceof Error ? e.message : String(e) } });
      return undefined;
    }
    let finished = false;
    let httpStatus = 0;
    let grpcStatus: number | undefined;
    let grpcMsg = "";
    const chunks: Buffer[] = [];
    const finish = (r: CallResult): void => {
      if (finished) return;
      finished = true;
      if (timer) clearTimeout(timer);
      done(r);
    };
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => {
      finish({ ok: false, err: { code: GrpcCode.DEADLINE_EXCEEDED, details: `no answer within ${timeoutMs} ms` } });
      req.close(http2.constants.NGHTTP2_CANCEL);
    }, timeoutMs);
    const readStatus = (h: http2.IncomingHttpHeaders): void => {
      const s = h["grpc-status"];
      if (s !== undefined) {
        grpcStatus = Number(s);
        grpcMsg = grpcMessage(h["grpc-message"]);
      }
    };
    req.on("response", (h) => {
      httpStatus = Number(h[HTTP2_HEADER_STATUS]);
      readStatus(h);
      // A trailers-only answer (status in the headers) is a refusal, not an accepted call.
      if (grpcStatus === undefined) onHeaders?.();
    });
    req.on("trailers", readStatus);
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("error", (e: Error) => finish({ ok: false, err: { code: GrpcCode.UNAVAILABLE, details: e.message } }));
    // The answer is complete when the server ends its side ('end': data and trailers read), even while a
    // client stream's own side is still open ('close' waits for both sides).
    const settle = (): void => {
      if (finished) return;
      if (grpcStatus === undefined) {
        const code = httpStatus && httpStatus !== 200 ? httpToGrpc(httpStatus) : req.rstCode === http2.constants.NGHTTP2_REFUSED_STREAM || !httpStatus ? GrpcCode.UNAVAILABLE : GrpcCode.INTERNAL;
        return finish({ ok: false, err: { code, details: httpStatus ? `HTTP ${httpStatus} without a gRPC status` : "the connection ended before an answer" } });
      }
      if (grpcStatus !== GrpcCode.OK) return finish({ ok: false, err: { code: grpcStatus, details: grpcMsg } });
      try {
        finish({ ok: true, messages: grpcMessages(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)) });
      } catch (e) {
        finish({ ok: false, err: { code: GrpcCode.INTERNAL, details: e instanceof Error ? e.message : String(e) } });
      }
    };
    req.on("end", settle);
    req.on("close", settle);
    return req;
  }

  /** Ends the session; later calls answer UNAVAILABLE. */
  close(): void {
    this.closed = true;
    this.session?.close();
    this.session = undefined;
  }
}

const clients = new Map<string, GrpcH2Client>();

/** The shared client of an endpoint (one HTTP/2 session per emulator per thread). */
export function h2Client(ep: GrpcEndpoint): GrpcH2Client {
  let c = clients.get(ep.address);
  if (!c) {
    c = new GrpcH2Client(ep.address);
    clients.set(ep.address, c);
  }
  return c;
}

/** Forgets and closes an endpoint's client (its emulator went away). */
export function dropH2Client(address: string): void {
  clients.get(address)?.close();
  clients.delete(address);
}
