/**
 * The worker host's dm_env_rpc v1 server (`dm_env_rpc.v1.Environment/Process`): worlds are remote
 * environments on devices of this host (world.ts). One bidirectional stream per client connection; each
 * request gets one response, in order; a failed request answers `error` (google.rpc.Status) and the stream
 * goes on. Loopback by default; bound beyond it, every stream must carry `authorization: Bearer <token>`.
 * A world nobody sent a request for in `idleTimeoutMs` (its client vanished) ends its episode, commits it,
 * gives its device back and is destroyed.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { CHANNEL_OPTIONS, dmEnvRpc, grpc, type EnvironmentRequest, type EnvironmentResponse } from "@farm/dm-env-rpc";
import { coerceError } from "@farm/errors";
import type { Logger } from "@farm/log";
import type { TaskCatalog } from "../task-catalog.ts";
import { checkRequested } from "./action-check.ts";
import { EnvError, invalid, precondition } from "./env-error.ts";
import { parseCreateSettings, parseResetSeed, unknownSettings } from "./settings.ts";
import { RemoteWorld, type WorldDeps } from "./world.ts";
import { withDeadline } from "@farm/time";

export interface RemoteEnvOptions {
  host: string;
  port: number;
  /** Required when `host` is not loopback (config.ts checks). */
  token: string | undefined;
  idleTimeoutMs: number;
  /** Most worlds at once on this host (each holds a device while it runs). */
  maxWorlds?: number;
  catalog: TaskCatalog;
  world: WorldDeps;
  logger: Logger;
}

type Call = grpc.ServerDuplexStream<EnvironmentRequest, EnvironmentResponse>;

/** Per-stream state: the world this stream joined. */
interface StreamState {
  joined: RemoteWorld | undefined;
}

export class RemoteEnvServer {
  private readonly worlds = new Map<string, RemoteWorld>();
  private readonly server = new grpc.Server(CHANNEL_OPTIONS);
  private reaper: NodeJS.Timeout | undefined;
  private closing: Promise<void> | undefined;
  private boundPort = 0;
  private readonly log: Logger;

  private constructor(private readonly o: RemoteEnvOptions) {
    this.log = o.logger.child({ component: "remote-env" });
  }

  static async start(o: RemoteEnvOptions): Promise<RemoteEnvServer> {
    const s = new RemoteEnvServer(o);
    s.server.addService(dmEnvRpc().service, { Process: (call: Call) => s.onStream(call) });
    s.boundPort = await new Promise<number>((resolve, reject) =>
      s.server.bindAsync(`${o.host.includes(":") ? `[${o.host}]` : o.host}:${o.port}`, grpc.ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))),
    );
    const every = Math.max(100, Math.min(5000, Math.floor(o.idleTimeoutMs / 4)));
    s.reaper = setInterval(() => void s.reapIdle(), every);
    s.reaper.unref();
    s.log.info({ event: "remote-env:listening", address: s.address, auth: o.token ? "token" : "none", idleTimeoutMs: o.idleTimeoutMs }, "dm_env_rpc server listening");
    return s;
  }

  get address(): string {
    return `${this.o.host.includes(":") ? `[${this.o.host}]` : this.o.host}:${this.boundPort}`;
  }

  /** Worlds and the device each holds (tests, status). */
  worldDevices(): Record<string, string | null> {
    return Object.fromEntries([...this.worlds].map(([n, w]) => [n, w.serial ?? null]));
  }

  private authorized(call: Call): boolean {
    const want = this.o.token;
    if (!want) return true;
    const v = call.metadata.get("authorization")[0];
    const m = typeof v === "string" ? /^Bearer\s+(.+)$/i.exec(v.trim()) : null;
    if (!m) return false;
    const a = Buffer.from(m[1]!);
    const b = Buffer.from(want);
    return a.length === b.length && timingSafeEqual(a, b);
  }

  private onStream(call: Call): void {
    if (this.closing) {
      call.emit("error", { code: grpc.status.UNAVAILABLE, details: "the worker is shutting down" });
      return;
    }
    if (!this.authorized(call)) {
      this.log.warn({ event: "remote-env:unauthenticated", peer: call.getPeer() }, "dm_env_rpc stream without a valid token refused");
      call.emit("error", { code: grpc.status.UNAUTHENTICATED, details: "dm_env_rpc: this worker requires 'authorization: Bearer <token>' metadata (FARM_ENV_TOKEN)" });
      return;
    }
    const st: StreamState = { joined: undefined };
    // Requests of a stream are answered in order: chain them.
    let chain: Promise<void> = Promise.resolve();
    call.on("data", (req: EnvironmentRequest) => {
      chain = chain.then(async () => {
        const res = await this.answer(req, st).catch((e: unknown) => this.errorResponse(e, req));
        if (!call.cancelled && call.writable) call.write(res);
      });
    });
    const done = () => {
      // The client left without LeaveWorld: its world keeps the device until the idle timeout.
      if (st.joined?.joinedBy === st) {
        st.joined.joinedBy = undefined;
        st.joined.lastActivityMs = Date.now();
      }
      st.joined = undefined;
    };
    call.on("end", () => {
      void chain.then(() => {
        done();
        call.end();
      });
    });
    call.on("cancelled", done);
    call.on("error", done);
  }

  private errorResponse(e: unknown, req: EnvironmentRequest): EnvironmentResponse {
    const env = e instanceof EnvError ? e : new EnvError(grpc.status.INTERNAL, coerceError(e).message);
    if (env.code === grpc.status.INTERNAL) this.log.error({ event: "remote-env:request-failed", request: req.payload, err: env.message }, "dm_env_rpc request failed");
    return { error: { code: env.code, message: env.message, details: [] } };
  }

  private async answer(req: EnvironmentRequest, st: StreamState): Promise<EnvironmentResponse> {
    switch (req.payload) {
      case "create_world":
        return { create_world: { world_name: await this.createWorld(req.create_world ?? {}) } };
      case "join_world":
        return { join_world: { specs: await this.joinWorld(req.join_world ?? {}, st) } };
      case "step": {
        const w = this.joinedWorld(st, "Step");
        const requested = checkRequested(req.step?.requested_observations ?? [], w.specs().observations);
        const r = await w.exclusive(() => w.step(req.step?.actions ?? {}, requested));
        return { step: r };
      }
      case "reset": {
        const w = this.joinedWorld(st, "Reset");
        const seed = parseResetSeed(req.reset?.settings);
        await w.exclusive(() => w.reset(seed));
        return { reset: { specs: w.specs() } };
      }
      case "reset_world": {
        const w = this.worldNamed(req.reset_world?.world_name);
        const seed = parseResetSeed(req.reset_world?.settings);
        await w.exclusive(() => w.reset(seed));
        return { reset_world: {} };
      }
      case "leave_world": {
        const w = st.joined;
        if (w) {
          st.joined = undefined;
          w.joinedBy = undefined;
          await w.exclusive(() => w.release());
        }
        return { leave_world: {} };
      }
      case "destroy_world":
        await this.destroyWorld(req.destroy_world?.world_name, st);
        return { destroy_world: {} };
      default:
        throw new EnvError(grpc.status.UNIMPLEMENTED, `dm_env_rpc: request '${String(req.payload ?? "empty")}' is not supported by the farm (extensions are not)`);
    }
  }

  private joinedWorld(st: StreamState, what: string): RemoteWorld {
    const w = st.joined;
    if (!w || !this.worlds.has(w.name)) throw precondition(`${what}: join a world first (CreateWorld, then JoinWorld)`);
    return w;
  }

  private worldNamed(name: string | undefined): RemoteWorld {
    const w = name ? this.worlds.get(name) : undefined;
    if (!w) throw new EnvError(grpc.status.NOT_FOUND, `no world named '${String(name ?? "").slice(0, 80)}' on this worker`);
    return w;
  }

  private async createWorld(req: { settings?: Record<string, unknown> }): Promise<string> {
    const settings = parseCreateSettings(req.settings as never);
    const task = this.o.catalog.byId.get(settings.taskId);
    if (!task) throw invalid(`CreateWorld: unknown task '${settings.taskId.slice(0, 80)}'; this worker serves: ${[...this.o.catalog.byId.keys()].join(", ")}`);
    const max = this.o.maxWorlds ?? 1024;
    if (this.worlds.size >= max) throw new EnvError(grpc.status.RESOURCE_EXHAUSTED, `this worker holds ${max} worlds already; destroy one first`);
    const name = `remote-${randomBytes(8).toString("hex")}`;
    const world = new RemoteWorld(name, task, settings, this.o.world);
    this.worlds.set(name, world);
    try {
      await world.exclusive(() => world.acquire());
    } catch (e) {
      this.worlds.delete(name);
      throw e;
    }
    this.log.info({ event: "world:created", world: name, taskId: task.task.id, serial: world.serial }, "remote world created");
    return name;
  }

  private async joinWorld(req: { world_name?: string; settings?: Record<string, unknown> }, st: StreamState) {
    unknownSettings((req.settings ?? {}) as never, new Set(), "JoinWorld");
    if (st.joined) throw precondition(`JoinWorld: this stream is joined to world ${st.joined.name} already; LeaveWorld first`);
    const w = this.worldNamed(req.world_name);
    if (w.joinedBy) throw precondition(`JoinWorld: world ${w.name} is joined by another connection`);
    w.joinedBy = st;
    st.joined = w;
    try {
      await w.exclusive(() => w.acquire());
    } catch (e) {
      w.joinedBy = undefined;
      st.joined = undefined;
      throw e;
    }
    return w.specs();
  }

  private async destroyWorld(name: string | undefined, st: StreamState): Promise<void> {
    const w = this.worldNamed(name);
    if (w.joinedBy && w.joinedBy !== st) throw precondition(`DestroyWorld: world ${w.name} is joined by another connection`);
    if (st.joined === w) st.joined = undefined;
    this.worlds.delete(w.name);
    await w.exclusive(() => w.release());
    this.log.info({ event: "world:destroyed", world: w.name }, "remote world destroyed");
  }

  private async reapIdle(): Promise<void> {
    const now = Date.now();
    for (const w of [...this.worlds.values()]) {
      // A world joined by a live stream is in use however slow its client; the clock runs once the stream is gone.
      if (w.active || w.joinedBy || now - w.lastActivityMs < this.o.idleTimeoutMs) continue;
      this.worlds.delete(w.name);
      w.joinedBy = undefined;
      this.log.warn({ event: "world:idle-destroyed", world: w.name, serial: w.serial ?? null, idleMs: now - w.lastActivityMs }, "no request for the idle timeout; remote world destroyed and its device given back");
      await w.exclusive(() => w.release()).catch((e: unknown) => this.log.error({ event: "world:release-failed", world: w.name, err: coerceError(e).message }, "releasing an idle world failed"));
    }
  }

  /** Stops taking streams, ends every world's episode (committed) and gives the devices back. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.reaper) clearInterval(this.reaper);
      const worlds = [...this.worlds.values()];
      this.worlds.clear();
      await Promise.all(worlds.map((w) => w.exclusive(() => w.release()).catch(() => undefined)));
      // In-flight calls get 2 s to finish; then the server drops them.
      const drained = new Promise<void>((resolve) => this.server.tryShutdown(() => resolve()));
      await withDeadline(drained, 2000, () => new Error("drain timed out")).catch(() => this.server.forceShutdown());
    })();
    return this.closing;
  }
}
