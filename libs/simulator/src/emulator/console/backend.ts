/** What the console drives: one simulated emulator's state, snapshots and lifetime. */

export interface ConsoleSnapshotInfo {
  name: string;
  sizeBytes?: number;
  createdAt?: Date;
}

export interface ConsoleSnapshots {
  /** The folder the snapshots live in (`avd snapshotspath`). */
  readonly directory: string;
  list(): Promise<ConsoleSnapshotInfo[]>;
  /** Each rejects with an Error whose message becomes the `KO: …` reply. */
  save(name: string): Promise<void>;
  load(name: string): Promise<void>;
  delete(name: string): Promise<void>;
  /** The snapshot loaded into this session, if any (`avd snapshot get`). */
  lastLoaded(): string | undefined;
}

export interface ConsoleBackend {
  readonly avdName: string;
  readonly avdDir: string;
  /** -read-only: snapshot save/load/delete are refused, as the emulator refuses them. */
  readonly readOnly: boolean;
  readonly snapshots: ConsoleSnapshots | undefined;
  discoveryPath(): string | undefined;
  /** false after `avd stop` (the VM is paused: adb gets no answer) until `avd start`. */
  isRunning(): boolean;
  stopVm(): void;
  startVm(): void;
  /** Turns the device 90° clockwise. */
  rotate(): void;
  /** `kill`: the emulator shuts down (called once the reply has been written). */
  kill(): void;
  /** `crash`: the emulator dies abruptly (called once the reply has been written). */
  crash(): void;
}
