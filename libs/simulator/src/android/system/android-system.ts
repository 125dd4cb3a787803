/**
 * All state of one simulated Android device, shared by the shell commands: properties, files,
 * faults. One instance per SimAndroid.
 */
import { SystemProperties } from "./props.ts";
import { SimFileSystem } from "./file-system.ts";
import { FaultInjector } from "./faults.ts";

export interface ScreenSize {
  width: number;
  height: number;
}

export interface AndroidSystemOptions {
  serial: string;
  seed: number;
  screen: ScreenSize;
  /** Wall clock in ms; injectable for tests. */
  now: () => number;
}

export class AndroidSystem {
  readonly serial: string;
  readonly seed: number;
  readonly screen: ScreenSize;
  readonly now: () => number;
  readonly props: SystemProperties;
  readonly fs: SimFileSystem;
  readonly faults: FaultInjector;

  constructor(opts: AndroidSystemOptions) {
    this.serial = opts.serial;
    this.seed = opts.seed;
    this.screen = opts.screen;
    this.now = opts.now;
    this.props = new SystemProperties(opts.serial, opts.screen);
    this.fs = new SimFileSystem(() => Math.floor(this.now() / 1000));
    this.faults = new FaultInjector(opts.seed, () => this.crashForegroundApp());
  }

  crashForegroundApp(): void {
    // Filled in with the activity manager.
  }

  close(): void {}
}
