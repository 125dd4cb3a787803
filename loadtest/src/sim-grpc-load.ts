/**
 * The gRPC half of `farm bench sim`: one EmulatorController client per simulated device (its own
 * HTTP/2 connection, as AndroidEnv holds one per emulator), round trips of sendTouch and
 * getScreenshot(RGBA8888), round-robin over the devices, one call at a time.
 */
import { CLIENT_CHANNEL_OPTIONS, emulatorGrpc, grpc, ImgFormat, type ImageMsg } from "@farm/emulator-grpc";

type Unary = (req: unknown, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res: unknown) => void) => void;

export interface GrpcTarget {
  port: number;
  client: grpc.Client & Record<string, Unary>;
}

export function openControllers(ports: readonly number[]): GrpcTarget[] {
  const { EmulatorController } = emulatorGrpc();
  return ports.map((port) => ({ port, client: new EmulatorController(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), CLIENT_CHANNEL_OPTIONS) as GrpcTarget["client"] }));
}

function unary<T>(t: GrpcTarget, method: string, req: unknown): Promise<T> {
  return new Promise((resolve, reject) => t.client[method]!(req, {}, (err, res) => (err ? reject(err) : resolve(res as T))));
}

/** Waits until every client's channel is connected, so the first sample is not a TCP connect. */
export async function warmUp(targets: readonly GrpcTarget[]): Promise<void> {
  await Promise.all(targets.map((t) => unary(t, "getStatus", {})));
}

/**
 * sendTouch round trips. Alternating finger down / up at a spot of the launcher without an icon, so
 * every call is a real touch that changes nothing on the screen.
 */
export async function touchRoundTrips(targets: readonly GrpcTarget[], calls: number, warmup: number): Promise<number[]> {
  const samples: number[] = [];
  const down = { touches: [{ x: 20, y: 620, identifier: 0, pressure: 1 }] };
  const up = { touches: [{ x: 20, y: 620, identifier: 0, pressure: 0 }] };
  for (let i = 0; i < warmup + calls; i++) {
    const t = targets[Math.floor(i / 2) % targets.length]!;
    const t0 = performance.now();
    await unary(t, "sendTouch", i % 2 === 0 ? down : up);
    if (i >= warmup) samples.push(performance.now() - t0);
  }
  return samples;
}

/** getScreenshot(RGBA8888) round trips; checks every image is width·height·4 bytes. */
export async function screenshotRoundTrips(targets: readonly GrpcTarget[], calls: number, warmup: number, expect: { width: number; height: number }): Promise<number[]> {
  const samples: number[] = [];
  const req = { format: ImgFormat.RGBA8888 };
  for (let i = 0; i < warmup + calls; i++) {
    const t = targets[i % targets.length]!;
    const t0 = performance.now();
    const img = await unary<ImageMsg>(t, "getScreenshot", req);
    const dt = performance.now() - t0;
    if (img.format.width !== expect.width || img.format.height !== expect.height || img.image.length !== expect.width * expect.height * 4) {
      throw new Error(`port ${t.port}: getScreenshot answered ${img.format.width}x${img.format.height} with ${img.image.length} bytes, expected ${expect.width}x${expect.height}x4`);
    }
    if (i >= warmup) samples.push(dt);
  }
  return samples;
}

export function closeAll(targets: readonly GrpcTarget[]): void {
  for (const t of targets) t.client.close();
}
