/**
 * The forwarder's gRPC client to the host's `android_env.A11yService`: the unary `SendForest` / `SendEvent`
 * the app uses for its periodic tree logs and for events, each with the app's 1 s deadline, on a channel of
 * their own built when first needed and dropped after a failed call (as the app resets its stub) — they go
 * out whether or not a stream is up; and a `Bidi` stream kept open (answering each `get_forest` with the
 * current forest), retried with a bounded exponential backoff on a fresh channel when it fails or ends
 * (AndroidEnv's servicer fails every one at once). The device never waits for any of it.
 */
import { a11yGrpc, grpc, CLIENT_CHANNEL_OPTIONS, type AccessibilityForestMsg, type ServerToClientMsg } from "@farm/a11y-grpc";
import { sleep } from "@farm/time";

/** The app's deadline for each unary call. */
const CALL_DEADLINE_MS = 1000;
export const BACKOFF_FIRST_MS = 250;
export const BACKOFF_MAX_MS = 4000;
/** How long a dial may take before it counts as failed. */
const READY_DEADLINE_MS = 10_000;
/** Unary calls in flight at most; more are dropped (a stalled host must not pile up device memory). */
const MAX_IN_FLIGHT = 16;

/** The metadata key the farm's hub reads the device's SET_GRPC token from. */
export const TOKEN_METADATA_KEY = "farm-a11y-token";

export interface LinkHooks {
  /** The address to dial now (`host:port`), or an error saying why there is none (no network, device loopback). */
  target(): { address: string } | { error: string };
  /** Sent as `farm-a11y-token` metadata on every call (SET_GRPC's `token` extra). */
  token?: string;
  /** The forest to answer `get_forest` with. */
  forest(): AccessibilityForestMsg;
  /** The stream came up (after `attempts` failed tries) or went down (`error`). */
  onUp(attempts: number): void;
  onDown(error: string): void;
}

type A11yClient = grpc.Client & {
  Bidi(md: grpc.Metadata): grpc.ClientDuplexStream<unknown, ServerToClientMsg>;
  SendForest(m: unknown, md: grpc.Metadata, opts: grpc.CallOptions, cb: (e: grpc.ServiceError | null) => void): void;
  SendEvent(m: unknown, md: grpc.Metadata, opts: grpc.CallOptions, cb: (e: grpc.ServiceError | null) => void): void;
};

export class ForwarderLink {
  private readonly stop = new AbortController();
  private client: A11yClient | undefined;
  /** The unary calls' channel (the app's grpcStub), with the address it was built for. */
  private unaryClient: { client: A11yClient; address: string } | undefined;
  private inFlight = 0;
  private droppedCalls = 0;

  /** Unary calls dropped because too many were in flight or no channel was open. */
  get dropped(): number {
    return this.droppedCalls;
  }

  constructor(private readonly hooks: LinkHooks) {
    void this.run();
  }

  private isUp = false;

  /** Whether a `Bidi` stream is open now. */
  get up(): boolean {
    return this.isUp;
  }

  sendForest(forest: AccessibilityForestMsg): void {
    this.unary("SendForest", forest);
  }

  sendEvent(event: Map<string, string>): void {
    this.unary("SendEvent", { event: Object.fromEntries(event) });
  }

  close(): void {
    this.stop.abort();
    this.client?.close();
    this.client = undefined;
    this.unaryClient?.client.close();
    this.unaryClient = undefined;
  }

  private metadata(): grpc.Metadata {
    const md = new grpc.Metadata();
    if (this.hooks.token) md.set(TOKEN_METADATA_KEY, this.hooks.token);
    return md;
  }

  private newClient(address: string): A11yClient {
    const { A11yService } = a11yGrpc();
    return new A11yService(address, grpc.credentials.createInsecure(), {
      ...CLIENT_CHANNEL_OPTIONS,
      // What the host sends the device is tiny (get_forest, error strings); refuse anything big.
      "grpc.max_receive_message_length": 1024 * 1024,
      "grpc.initial_reconnect_backoff_ms": BACKOFF_FIRST_MS,
      "grpc.max_reconnect_backoff_ms": BACKOFF_MAX_MS,
    }) as unknown as A11yClient;
  }

  private unary(method: "SendForest" | "SendEvent", msg: unknown): void {
    if (this.stop.signal.aborted || this.inFlight >= MAX_IN_FLIGHT) {
      this.droppedCalls++;
      return;
    }
    const target = this.hooks.target();
    if ("error" in target) {
      this.droppedCalls++;
      return;
    }
    if (this.unaryClient?.address !== target.address) {
      this.unaryClient?.client.close();
      this.unaryClient = { client: this.newClient(target.address), address: target.address };
    }
    const stub = this.unaryClient;
    this.inFlight++;
    // A failed call (host away, deadline) drops the channel, as the app resets its stub; the call's data is lost, as on a device.
    stub.client[method](msg, this.metadata(), { deadline: Date.now() + CALL_DEADLINE_MS }, (e) => {
      this.inFlight--;
      if (e && this.unaryClient === stub) {
        stub.client.close();
        this.unaryClient = undefined;
      }
    });
  }

  /** Tries since the stream was last up; whether the outage was reported (once per outage, not per try). */
  private failures = 0;
  private outageReported = false;

  private async run(): Promise<void> {
    const signal = this.stop.signal;
    while (!signal.aborted) {
      const target = this.hooks.target();
      const error = "error" in target ? target.error : await this.stream(target.address);
      if (signal.aborted) return;
      if (this.up) {
        this.isUp = false;
        this.failures = 0;
      }
      if (!this.outageReported) {
        this.outageReported = true;
        this.hooks.onDown(error);
      }
      this.failures++;
      await sleep(Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** Math.min(this.failures - 1, 10)), signal);
    }
  }

  /** One `Bidi` stream on a fresh channel, until it fails or ends; resolves with why it ended. */
  private stream(address: string): Promise<string> {
    this.client?.close();
    const client = this.newClient(address);
    this.client = client;
    return new Promise((resolve) => {
      const call = client.Bidi(this.metadata());
      let settled = false;
      let backedUp = false;
      const finish = (why: string): void => {
        if (settled) return;
        settled = true;
        this.stop.signal.removeEventListener("abort", onAbort);
        call.cancel();
        resolve(why);
      };
      const onAbort = (): void => finish("closed");
      this.stop.signal.addEventListener("abort", onAbort, { once: true });
      const markUp = (): void => {
        if (this.up || settled) return;
        this.isUp = true;
        this.outageReported = false;
        this.hooks.onUp(this.failures);
      };
      // Up once the channel is connected (a host need not write anything before it wants a forest);
      // a peer that takes the connection but never speaks HTTP/2 is given up on and retried.
      client.waitForReady(Date.now() + READY_DEADLINE_MS, (e) => (e ? finish(`not connected within ${READY_DEADLINE_MS} ms`) : markUp()));
      call.on("metadata", markUp);
      call.on("data", (m: ServerToClientMsg) => {
        markUp();
        // AndroidEnv's servicer also sends empty messages (to unblock clients); only get_forest asks for something.
        // Requests while an answer still waits for the host to read it are answered by that one
        // (a host asking faster than it reads must not pile forests up in device memory).
        if (m.payload !== "get_forest" || settled || backedUp) return;
        if (!call.write({ forest: this.hooks.forest() })) {
          backedUp = true;
          call.once("drain", () => (backedUp = false));
        }
      });
      call.on("error", (e: grpc.ServiceError) => finish(`${grpc.status[e.code] ?? e.code}: ${e.details}`));
      call.on("end", () => finish("the host ended the stream"));
    });
  }
}
