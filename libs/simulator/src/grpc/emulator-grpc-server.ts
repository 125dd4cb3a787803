/**
 * The emulator's gRPC endpoint for one simulated device: EmulatorController (status, screenshots,
 * touch, keys, mouse, VM state) and SnapshotService (list, save, load, delete), on plain HTTP/2
 * (insecure credentials; loopback by default), optionally requiring `authorization: Bearer <token>`
 * like the emulator's `-grpc-use-token`. Methods we do not serve are left out of the handler table,
 * so grpc-js answers them UNIMPLEMENTED at once.
 */
import { silentLogger, type Logger } from "@farm/log";
import {
  emulatorGrpc, grpc, tokenFromMetadata, ImgFormat, RunState, TransportChannel,
  type EmulatorStatusMsg, type ImageFormatMsg, type InputEventMsg, type ImageMsg, type KeyboardEventMsg, type MouseEventMsg,
  type SnapshotListMsg, type SnapshotPackageMsg, type TouchEventMsg, type TouchMsg, type VmRunStateMsg,
} from "@farm/emulator-grpc";
import type { SimAndroid } from "../android/index.ts";
import { Canvas } from "../graphics/canvas.ts";
import type { DeviceSnapshots } from "../snapshot/device-snapshots.ts";
import { TouchTracker } from "./touch-tracker.ts";
import { androidKeyCode } from "./key-codes.ts";
import { encodeImage, scaleFrame, targetSize, type Frame } from "./screenshot.ts";
import { snapshotHandlers } from "./snapshot-handlers.ts";
import { writeRegion } from "./shared-region.ts";

/** What the endpoint needs of a device (SimDevice has it all). */
export interface GrpcDevice {
  readonly serial: string;
  readonly android: SimAndroid;
  readonly snapshots: DeviceSnapshots;
  readonly startedAtMs: number;
  readonly isHung: boolean;
  readonly isClosed: boolean;
  readonly whenClosed: Promise<void>;
  close(): Promise<void>;
}

export interface EmulatorGrpcOptions {
  /** 0 or absent: a free port. */
  port?: number;
  /** Default 127.0.0.1 (loopback, as the emulator listens by default). */
  host?: string;
  /** When set, every call must carry `authorization: Bearer <token>`, else UNAUTHENTICATED. */
  token?: string;
  /** Reported by getStatus as `avd.name`. */
  avdName?: string;
  /** Serve as an emulator older than streamInputEvent does (it answers UNIMPLEMENTED), for clients' fallbacks. */
  withoutInputStream?: boolean;
  /** How often an open streamScreenshot looks for a changed screen (default 50 ms). */
  streamPollMs?: number;
  logger?: Logger;
}

export interface EmulatorGrpcServer {
  readonly host: string;
  readonly port: number;
  readonly token: string | undefined;
  /** Stops serving (open streams end); idempotent. The device stays up. */
  close(): Promise<void>;
}

/** The emulator version string getStatus reports (a real emulator's shape, marked as ours). */
export const SIM_EMULATOR_VERSION = "33.1.24.0 (build_id farm-sim) (CL:N/A)";
const MOUSE_POINTER_ID = -1;
/** google.protobuf.Empty, shared by every answer that carries nothing. */
const EMPTY = Object.freeze({});

type Unary<Req, Res> = grpc.handleUnaryCall<Req, Res>;

/** Starts serving gRPC for a device; closes itself when the device stops. */
export async function startEmulatorGrpc(device: GrpcDevice, opts: EmulatorGrpcOptions = {}): Promise<EmulatorGrpcServer> {
  const host = opts.host ?? "127.0.0.1";
  const log = (opts.logger ?? silentLogger).child({ component: "sim-grpc", serial: device.serial });
  const { services } = emulatorGrpc();
  const sys = device.android.system;
  const touches = new TouchTracker(sys);
  let seq = 0;
  let closing: Promise<void> | undefined;

  /** A handler that runs after the gRPC latency of its class; synchronously, without allocating, when there is none (the hot path). */
  const withLatency = <Req, Res>(cls: "input" | "screencap", fn: Unary<Req, Res>): Unary<Req, Res> =>
    (call, cb) => {
      const ms = sys.faults.grpcLatencyMs(cls);
      if (ms > 0) setTimeout(fn, ms, call, cb);
      else fn(call, cb);
    };

  // Frames are drawn into one reused surface and serialized at once (below), so a screenshot costs
  // no fresh frame-sized memory for the drawing.
  const surface = new Canvas(sys.screen.width, sys.screen.height);
  // RGB888 pixels are converted into one reused buffer too (sent or written before the next frame), and
  // only when the screen changed since the last conversion: `rgbOf` names the pixels the buffer holds.
  let rgb = new Uint8Array(0);
  let rgbOf = "";
  const screenshot = (fmt: ImageFormatMsg): ImageMsg => {
    const display = sys.displayFrame(surface);
    const size = targetSize(display, fmt.width, fmt.height);
    const frame = (): Frame => scaleFrame(display, size.width, size.height);
    const rgbBytes = size.width * size.height * 3;
    const pixels = (): Uint8Array => {
      if (fmt.format !== ImgFormat.RGB888) return encodeImage(frame(), fmt.format);
      const key = `${display.version}/${display.rotation}/${size.width}x${size.height}`;
      if (rgb.byteLength < rgbBytes) {
        rgb = new Uint8Array(rgbBytes);
        rgbOf = "";
      }
      if (rgbOf !== key) {
        encodeImage(frame(), ImgFormat.RGB888, rgb);
        rgbOf = key;
      }
      return rgb.subarray(0, rgbBytes);
    };
    return imageMessage(size, pixels, fmt, display.rotation, ++seq);
  };

  const controller: Record<string, grpc.UntypedHandleCall> = {
    getStatus: ((_call, cb) => cb(null, status(device, opts.avdName))) as Unary<unknown, EmulatorStatusMsg>,
    getScreenshot: withLatency<ImageFormatMsg, Buffer>("screencap", (call, cb) => cb(null, serializeImage(screenshot(call.request)))),
    streamScreenshot: ((call: grpc.ServerWritableStream<ImageFormatMsg, Buffer>) =>
      streamScreens(call, () => screenshot(call.request), opts.streamPollMs ?? 50, device.whenClosed)) as grpc.handleServerStreamingCall<ImageFormatMsg, Buffer>,
    sendTouch: withLatency<TouchEventMsg, object>("input", (call, cb) => {
      touches.apply(call.request.touches);
      cb(null, EMPTY);
    }),
    sendMouse: withLatency<MouseEventMsg, object>("input", (call, cb) => {
      touches.apply([mouseTouch(call.request)]);
      cb(null, EMPTY);
    }),
    sendKey: withLatency<KeyboardEventMsg, object>("input", (call, cb) => {
      sendKey(device.android, call.request);
      cb(null, EMPTY);
    }),
    streamInputEvent: ((call: grpc.ServerReadableStream<InputEventMsg, object>, cb: grpc.sendUnaryData<object>) =>
      inputStream(call, cb, (ev) => applyInput(device.android, touches, ev), device)) as grpc.handleClientStreamingCall<InputEventMsg, object>,
    getVmState: ((_call, cb) => cb(null, { state: RunState.RUNNING })) as Unary<unknown, VmRunStateMsg>,
    setVmState: ((call, cb) => {
      const state = call.request.state;
      if (state === RunState.SHUTDOWN || state === RunState.TERMINATE) {
        log.info({ event: "grpc:shutdown", state }, "setVmState asked the device to stop");
        cb(null, EMPTY);
        // Answer first, then stop, as the emulator does: the client sees OK, then the device goes away.
        setImmediate(() => void device.close());
        return;
      }
      if (state === RunState.RUNNING) return cb(null, EMPTY);
      cb({ code: grpc.status.UNIMPLEMENTED, details: `setVmState(${state}) is not simulated; RUNNING, SHUTDOWN and TERMINATE are` });
    }) as Unary<VmRunStateMsg, object>,
  };

  const snapshot = snapshotHandlers(device.snapshots, log);

  const server = new grpc.Server();
  // An older emulator does not know the method at all: its path is answered UNIMPLEMENTED at once.
  const controllerDef = opts.withoutInputStream ? withoutMethod(services.emulatorController, "streamInputEvent") : services.emulatorController;
  if (opts.withoutInputStream) delete controller.streamInputEvent;
  server.addService(preserializedImages(controllerDef), guarded(controller, opts.token, device));
  server.addService(services.snapshotService, guarded(snapshot, opts.token, device));
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${host.includes(":") ? `[${host}]` : host}:${opts.port ?? 0}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  log.info({ event: "grpc:listening", host, port, token: opts.token !== undefined }, "gRPC endpoint listening");

  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      server.tryShutdown(() => resolve());
      // Open streams would keep tryShutdown waiting; end them after a short grace.
      setTimeout(() => server.forceShutdown(), 200).unref();
    });
    return closing;
  };
  void device.whenClosed.then(close);
  return { host, port, token: opts.token, close };
}

const IMAGE_METHODS = ["getScreenshot", "streamScreenshot"] as const;
let imageSerializer: ((img: ImageMsg) => Buffer) | undefined;

/** An Image message as bytes, now (the image may be a reused surface's bytes). */
function serializeImage(img: ImageMsg): Buffer {
  imageSerializer ??= emulatorGrpc().services.emulatorController["getScreenshot"]!.responseSerialize as (img: ImageMsg) => Buffer;
  return imageSerializer(img);
}

/** The controller's definition with the image methods answering bytes serialized by serializeImage. */
function preserializedImages(def: grpc.ServiceDefinition): grpc.ServiceDefinition {
  const out: Record<string, grpc.MethodDefinition<unknown, unknown>> = { ...def };
  for (const m of IMAGE_METHODS) out[m] = { ...def[m]!, responseSerialize: (b: unknown) => b as Buffer };
  return out as grpc.ServiceDefinition;
}

function withoutMethod(def: grpc.ServiceDefinition, name: string): grpc.ServiceDefinition {
  const out: Record<string, grpc.MethodDefinition<unknown, unknown>> = { ...def };
  delete out[name];
  return out as grpc.ServiceDefinition;
}

/**
 * The Image answer. With an MMAP transport (raw formats only: a PNG's length is not known beforehand) the pixels go
 * into the client's region and the answer echoes the transport; a region that could not be written gets
 * neither pixels nor transport, as the emulator answers.
 */
function imageMessage(size: { width: number; height: number }, pixels: () => Uint8Array, fmt: ImageFormatMsg, rotation: number, seq: number): ImageMsg {
  const format = fmt.format;
  const msg: ImageMsg = {
    format: { format, width: size.width, height: size.height, rotation: { rotation }, display: 0 },
    width: size.width,
    height: size.height,
    image: NO_PIXELS,
    seq,
    timestampUs: Date.now() * 1000,
  };
  const t = fmt.transport;
  if (t?.channel === TransportChannel.MMAP && format !== ImgFormat.PNG) {
    if (writeRegion(t.handle, pixels())) msg.format.transport = { channel: TransportChannel.MMAP, handle: t.handle };
  } else msg.image = pixels();
  return msg;
}
const NO_PIXELS = new Uint8Array(0);

function status(device: GrpcDevice, avdName: string | undefined): EmulatorStatusMsg {
  const sys = device.android.system;
  const entries: [string, string][] = [
    ["hw.lcd.width", String(sys.screen.width)],
    ["hw.lcd.height", String(sys.screen.height)],
    ["hw.lcd.density", String(sys.display.physicalDensity)],
    ["hw.cpu.arch", "x86_64"],
    ["hw.cpu.ncore", "2"],
    ["hw.ramSize", "2048"],
    ["hw.initialOrientation", "portrait"],
  ];
  if (avdName) entries.push(["avd.name", avdName]);
  return {
    version: SIM_EMULATOR_VERSION,
    uptime: Date.now() - device.startedAtMs,
    booted: !device.isClosed,
    vmConfig: { hypervisorType: 2, numberOfCpuCores: 2, ramSizeBytes: 2048 * 1024 * 1024 },
    hardwareConfig: { entry: entries.map(([key, value]) => ({ key, value })) },
  };
}

/** One event of streamInputEvent, through the same paths as sendTouch / sendKey / sendMouse (the other kinds are not simulated). */
function applyInput(android: SimAndroid, touches: TouchTracker, ev: InputEventMsg): void {
  if (ev.touch_event) touches.apply(ev.touch_event.touches);
  else if (ev.key_event) sendKey(android, ev.key_event);
  else if (ev.mouse_event) touches.apply([mouseTouch(ev.mouse_event)]);
}

/** A mouse event as the touch it stands for: button 1 is a finger of its own, down while pressed. */
function mouseTouch(m: MouseEventMsg): TouchMsg {
  return { x: m.x, y: m.y, identifier: MOUSE_POINTER_ID, pressure: m.buttons & 1 ? 1 : 0 };
}

/**
 * A streamInputEvent call: events are applied in order as they arrive; while the device is hung they wait
 * (a frozen emulator reads nothing) and run once it resumes. The answer (Empty) goes when the client ends
 * its side.
 */
function inputStream(call: grpc.ServerReadableStream<InputEventMsg, object>, cb: grpc.sendUnaryData<object>, apply: (ev: InputEventMsg) => void, device: GrpcDevice): void {
  // Headers at once: the client knows the call is served before its first event.
  call.sendMetadata(new grpc.Metadata());
  const pending: InputEventMsg[] = [];
  let waiting = false;
  let ended = false;
  const drain = (): void => {
    waiting = false;
    while (pending.length > 0) {
      if (device.isClosed) return;
      if (device.isHung) {
        waiting = true;
        setTimeout(drain, HUNG_POLL_MS);
        return;
      }
      apply(pending.shift()!);
    }
    if (ended) cb(null, EMPTY);
  };
  call.on("data", (ev: InputEventMsg) => {
    pending.push(ev);
    if (!waiting) drain();
  });
  call.on("end", () => {
    ended = true;
    if (!waiting) drain();
  });
  call.on("error", () => (pending.length = 0));
}

/** keydown and keypress deliver the key (as Android delivers on DOWN); keyup only ends it. `text` is typed. */
function sendKey(android: SimAndroid, ev: KeyboardEventMsg): void {
  const input = android.system.input;
  if (ev.text) {
    input.text(ev.text);
    return;
  }
  if (ev.eventType === 1) return; // keyup
  const code = androidKeyCode(ev);
  if (code !== undefined) input.key(code);
}

/** First frame at once, then a frame whenever the screen differs from the last one sent. */
function streamScreens(call: grpc.ServerWritableStream<ImageFormatMsg, Buffer>, take: () => ImageMsg, pollMs: number, deviceClosed: Promise<void>): void {
  let last: Uint8Array | undefined;
  let waitingForDrain = false;
  let ended = false;
  const tick = (): void => {
    if (ended || waitingForDrain) return;
    const img = take();
    const bytes = img.image as Uint8Array;
    if (last && Buffer.compare(last, bytes) === 0) return;
    last = Uint8Array.from(bytes);
    if (!call.write(serializeImage(img))) {
      waitingForDrain = true;
      call.once("drain", () => (waitingForDrain = false));
    }
  };
  const timer = setInterval(tick, pollMs);
  const end = (): void => {
    if (ended) return;
    ended = true;
    clearInterval(timer);
  };
  call.on("cancelled", end);
  call.on("close", end);
  call.on("error", end);
  void deviceClosed.then(() => {
    if (ended) return;
    end();
    call.end();
  });
  tick();
}

type AnyCall = grpc.ServerUnaryCall<unknown, unknown> & grpc.ServerWritableStream<unknown, unknown>;
const HUNG_POLL_MS = 50;

/**
 * Wraps every handler: a call without the right bearer token is refused (UNAUTHENTICATED); while
 * the device is hung (fault injection: the whole emulator frozen) a call waits, so clients see their
 * deadline pass, and runs once the device resumes. The common case costs two checks.
 */
function guarded(handlers: Record<string, grpc.UntypedHandleCall>, token: string | undefined, device: GrpcDevice): grpc.UntypedServiceImplementation {
  const refuse = { code: grpc.status.UNAUTHENTICATED, details: "missing or wrong authorization: Bearer token (the emulator was started with a gRPC token)" };
  const out: grpc.UntypedServiceImplementation = {};
  for (const [name, h] of Object.entries(handlers)) {
    const run = h as (c: AnyCall, cb?: grpc.sendUnaryData<unknown>) => void;
    const whenResponsive = (call: AnyCall, cb: grpc.sendUnaryData<unknown> | undefined): void => {
      if (!device.isHung) return run(call, cb);
      if (call.cancelled || device.isClosed) return;
      setTimeout(() => whenResponsive(call, cb), HUNG_POLL_MS);
    };
    out[name] = ((call: AnyCall, cb?: grpc.sendUnaryData<unknown>) => {
      if (token !== undefined && tokenFromMetadata(call.metadata) !== token) {
        if (cb) return cb(refuse);
        return call.destroy(Object.assign(new Error(refuse.details), refuse));
      }
      whenResponsive(call, cb);
    }) as grpc.UntypedHandleCall;
  }
  return out;
}
