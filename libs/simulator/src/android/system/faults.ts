/** Fault injection for one simulated device: latency profiles, app crashes, dropped input events. */
import { LATENCY_PROFILES, SNAPSHOT_LOAD_MS, isLatencyProfileName, latencyClassOf, type LatencyProfileName } from "./latency.ts";
import { simRandom, type SeededRandom } from "./rng.ts";

export interface Faults {
  setLatencyProfile(name: LatencyProfileName): void;
  /** Added milliseconds for a command class (`input`, `screencap`/`framebuffer`, `am`, `pm`, `settings`, `dumpsys`, other → shell). */
  latencyMs(commandClass: string): number;
  /** The foreground app's process dies (FATAL EXCEPTION in logcat, the launcher comes to the front). */
  crashApp(): void;
  /** Probability in [0, 1] that an input event is silently ignored. */
  setTapDropRate(p: number): void;
}

export class FaultInjector implements Faults {
  private profile: LatencyProfileName = "instant";
  private dropRate = 0;
  private readonly rng: SeededRandom;

  constructor(seed: number, private readonly onCrash: () => void) {
    this.rng = simRandom(seed ^ 0x5eed7a9);
  }

  setLatencyProfile(name: LatencyProfileName): void {
    if (!isLatencyProfileName(name)) throw new Error(`unknown latency profile: ${String(name)}`);
    this.profile = name;
  }

  latencyMs(commandClass: string): number {
    return LATENCY_PROFILES[this.profile][latencyClassOf(commandClass)];
  }

  /**
   * Added ms for a call over the emulator's gRPC endpoint: the gRPC figures of "emulator-grpc"
   * whatever the profile (the endpoint costs what it costs), nothing under "instant".
   */
  grpcLatencyMs(cls: "input" | "screencap"): number {
    return this.profile === "instant" ? 0 : LATENCY_PROFILES["emulator-grpc"][cls];
  }

  /** The current latency profile (what screen changes take: latency.ts MOTION_PROFILES). */
  get profileName(): LatencyProfileName {
    return this.profile;
  }

  /** The current profile's snapshot-load delay. */
  snapshotLoadMs(): number {
    return SNAPSHOT_LOAD_MS[this.profile];
  }

  crashApp(): void {
    this.onCrash();
  }

  setTapDropRate(p: number): void {
    if (!(p >= 0 && p <= 1)) throw new Error(`tap drop rate must be in [0, 1], got ${p}`);
    this.dropRate = p;
  }

  /** Draws whether the next input event is lost (only consumes randomness when a rate is set). */
  shouldDropInput(): boolean {
    return this.dropRate > 0 && this.rng.next() < this.dropRate;
  }
}
