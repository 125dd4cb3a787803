/**
 * One worker host of `farm bench scale`: the real WorkerService (one BullMQ Worker, the device pool, the
 * episode processor, exactly-once commits) over SCALE_DEVICES in-memory FakeDevices instead of an adb
 * server — 1,000 simulated emulators are more than one adb server on a 2-core machine serves, and the
 * FakeDevice passes the same conformance tests as the real driver. Prints `ready` once every device is bound;
 * drains on SIGTERM.
 * Environment: REDIS_URL, SCALE_PREFIX, SCALE_DEVICES, SCALE_HOST (serial prefix), SCALE_OUT, SCALE_TASK,
 * SCALE_STEP_MS (a device's time per step: the wait after each action, default 0), SCALE_STEP_JITTER (0–0.9: each
 * step takes SCALE_STEP_MS × (1 ± jitter), uniformly, as an emulator's steps vary; default 0), SCALE_SETTLE_MS (the
 * wait after each setup/reset step, default 0), SCALE_LOCK_MS (the jobs' lock duration and stalled-check interval; the
 * worker's defaults when unset).
 */
import { FakeDevice, type ActionChannel } from "@farm/adb";
import { runUntilSignal, untilAborted } from "@farm/lifecycle";
import { createLogger } from "@farm/log";
import { createSeededRandom, type SeededRandom } from "@farm/seeded-random";
import { sleep } from "@farm/time";
import { resolveWorkerConfig, StaticDeviceSource, WorkerService } from "@farm/worker";
import { benchLogLevel, scaleHostSettings } from "./settings.ts";

const settings = scaleHostSettings();
const { devices: count, host, stepMs, jitter } = settings;

/**
 * A FakeDevice whose actions take a random extra 0–2 × jitter × stepMs (the runner waits the rest after each
 * action), so steps take stepMs × (1 ± jitter) and episodes that start together drift apart, as on emulators.
 */
class JitteredDevice extends FakeDevice {
  constructor(serial: string, private readonly random: SeededRandom) {
    super({ serial });
  }

  override async openActionChannel(): Promise<ActionChannel> {
    const ch = await super.openActionChannel();
    const paced = <A extends unknown[], R>(act: (...a: A) => Promise<R>) => async (...a: A): Promise<R> => {
      const r = await act(...a);
      await sleep(2 * jitter * stepMs * this.random.next());
      return r;
    };
    return {
      touchDown: paced((x, y) => ch.touchDown(x, y)),
      touchMove: paced((x, y) => ch.touchMove(x, y)),
      touchUp: paced((x, y) => ch.touchUp(x, y)),
      tap: paced((x, y) => ch.tap(x, y)),
      swipe: paced((x1, y1, x2, y2, ms) => ch.swipe(x1, y1, x2, y2, ms)),
      keyEvent: paced((k) => ch.keyEvent(k)),
      keyEvents: paced((k) => ch.keyEvents(k)),
      text: paced((t) => ch.text(t)),
      close: () => ch.close(),
    };
  }
}

const devices = Array.from({ length: count }, (_, i) => {
  const serial = `${host}-${i}`;
  return jitter > 0 ? new JitteredDevice(serial, createSeededRandom(i + 1000 * host.length)) : new FakeDevice({ serial });
});
const config = resolveWorkerConfig({
  redisUrl: settings.redisUrl,
  queuePrefix: settings.prefix,
  workerName: host,
  taskPaths: [settings.task],
  outDir: settings.out,
  metricsPort: 0,
  drainTimeoutMs: 5000,
  ...(settings.lockMs !== undefined ? { lockDurationMs: settings.lockMs, stalledIntervalMs: settings.lockMs } : {}),
  episode: { settleMs: settings.settleMs, logSettleMs: stepMs * (1 - jitter), stepTimeoutMs: 5000, resetTimeoutMs: 10_000, adbCallTimeoutMs: 5000 },
});
const logger = createLogger({ service: "worker", level: benchLogLevel() });
const svc = await WorkerService.create(config, { logger, noMetricsServer: true, deviceSource: new StaticDeviceSource(devices) });
await svc.start();
const deadline = Date.now() + 300_000;
for (;;) {
  const ready = Object.values(svc.deviceStates()).filter((s) => s === "ready" || s === "busy").length;
  if (ready === count) break;
  if (Date.now() > deadline) throw new Error(`scale-host ${host}: only ${ready} of ${count} devices bound after 300 s`);
  await sleep(100);
}
process.stdout.write("ready\n");
// Drains on the first SIGTERM/SIGINT; a second one exits at once.
await runUntilSignal(async (stop) => {
  await untilAborted(stop);
  await svc.close();
});
process.exit(0);
