/** A host-side `android_env.A11yService` in Node for the forwarder's tests: records what devices send, asks for forests on Bidi. */
import { a11yGrpc, grpc, CLIENT_CHANNEL_OPTIONS, type AccessibilityForestMsg, type ClientToServerMsg, type ServerToClientMsg } from "@farm/a11y-grpc";
import { sleep } from "@farm/time";

export const FORWARDER_COMPONENT = "com.google.androidenv.accessibilityforwarder/com.google.androidenv.accessibilityforwarder";

/** The three device-side commands AndroidEnv's A11yGrpcWrapper sends (the SET_GRPC extras ride inside the action string). */
export function wrapperCommands(port: number, host = "10.0.2.2"): string[] {
  return [
    `settings put secure enabled_accessibility_services ${FORWARDER_COMPONENT}.AccessibilityForwarder`,
    `am broadcast -a accessibility_forwarder.intent.action.ENABLE_ACCESSIBILITY_TREE_LOGS -n ${FORWARDER_COMPONENT}.FlagsBroadcastReceiver`,
    `am broadcast -a accessibility_forwarder.intent.action.SET_GRPC --ei "port" ${port} --es "host" ${host} -n ${FORWARDER_COMPONENT}.FlagsBroadcastReceiver`,
  ];
}

export interface HostA11y {
  port: number;
  forests: AccessibilityForestMsg[];
  events: Record<string, string>[];
  /** Open Bidi streams now. */
  streams(): number;
  /** Asks every open stream for its forest and resolves with the first answer. */
  getForest(timeoutMs?: number): Promise<AccessibilityForestMsg>;
  close(): Promise<void>;
}

/**
 * `greet`: write an empty message as a stream opens, as AndroidEnv's servicer does (default true).
 * `bidiFails`: every `Bidi` fails at once, as AndroidEnv 1.3's servicer on its synchronous server does (an async
 * generator where an iterator is wanted: status UNKNOWN); the unary calls work.
 */
export async function startHostA11y(port = 0, opts: { greet?: boolean; bidiFails?: boolean } = {}): Promise<HostA11y & { bidiCalls(): number }> {
  let bidiCalls = 0;
  const server = new grpc.Server(CLIENT_CHANNEL_OPTIONS);
  const forests: AccessibilityForestMsg[] = [];
  const events: Record<string, string>[] = [];
  const open = new Set<grpc.ServerDuplexStream<ClientToServerMsg, ServerToClientMsg>>();
  const waiters: ((f: AccessibilityForestMsg) => void)[] = [];
  server.addService(a11yGrpc().service, {
    SendForest: (call: grpc.ServerUnaryCall<AccessibilityForestMsg, unknown>, cb: grpc.sendUnaryData<unknown>) => {
      forests.push(call.request);
      cb(null, { error: "" });
    },
    SendEvent: (call: grpc.ServerUnaryCall<{ event: Record<string, string> }, unknown>, cb: grpc.sendUnaryData<unknown>) => {
      events.push({ ...call.request.event });
      cb(null, { error: "" });
    },
    Bidi: (call: grpc.ServerDuplexStream<ClientToServerMsg, ServerToClientMsg>) => {
      bidiCalls++;
      if (opts.bidiFails) {
        call.emit("error", { code: grpc.status.UNKNOWN, details: "Exception iterating responses: 'async_generator' object is not an iterator" });
        return;
      }
      open.add(call);
      if (opts.greet !== false) call.write({}); // as AndroidEnv's servicer: an empty message first
      call.on("data", (m: ClientToServerMsg) => {
        if (m.payload === "forest" && m.forest) for (const w of waiters.splice(0)) w(m.forest);
        if (m.payload === "event" && m.event) events.push({ ...m.event.event });
      });
      const gone = (): void => void open.delete(call);
      call.on("end", () => {
        gone();
        call.end();
      });
      call.on("error", gone);
      call.on("cancelled", gone);
    },
  });
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  return {
    port: bound,
    bidiCalls: () => bidiCalls,
    forests,
    events,
    streams: () => open.size,
    getForest(timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`no forest within ${timeoutMs} ms (${open.size} streams open)`)), timeoutMs);
        waiters.push((f) => {
          clearTimeout(t);
          resolve(f);
        });
        for (const c of open) c.write({ get_forest: {} });
      });
    },
    async close() {
      for (const c of open) c.destroy();
      server.forceShutdown();
    },
  };
}

/** Polls `cond` until true or `timeoutMs` passes (generous: a busy 2-core machine). */
export async function until(what: string, cond: () => boolean, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}
