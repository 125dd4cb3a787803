/**
 * The emulator command line a user writes to run many headless instances of one AVD: its own ports,
 * no window or audio, `-read-only` so instances share the AVD's disk images, and nothing saved on exit
 * (`-no-snapshot-save`), so every boot starts from the same state.
 */
import type { EmulatorPorts } from "./ports.ts";

export interface EmulatorCommand {
  avd: string;
  ports: EmulatorPorts;
  /** Boot from this snapshot; else the AVD's quick-boot snapshot if any, else cold. */
  snapshot?: string;
  /** Serve the gRPC endpoint (default true); without it boot and health are checked over adb. */
  grpc?: boolean;
  /** More options, appended as given (each one an argv element, never through a shell). */
  extraArgs?: readonly string[];
}

const AVD_NAME = /^[A-Za-z0-9._-]{1,100}$/;

/** Throws on an AVD or snapshot name the emulator would not take (the names become argv, never shell text). */
export function checkName(what: "avd" | "snapshot", name: string): void {
  if (!AVD_NAME.test(name)) throw new RangeError(`emulator launcher: ${what} name '${name.slice(0, 80)}' must be 1-100 characters of A-Z a-z 0-9 . _ -`);
}

export function emulatorArgs(c: EmulatorCommand): string[] {
  checkName("avd", c.avd);
  if (c.snapshot !== undefined) checkName("snapshot", c.snapshot);
  return [
    "-avd", c.avd,
    "-ports", `${c.ports.console},${c.ports.adb}`,
    ...(c.grpc === false ? [] : ["-grpc", String(c.ports.grpc)]),
    "-no-window", "-no-audio", "-no-boot-anim",
    "-read-only", "-no-snapshot-save",
    ...(c.snapshot !== undefined ? ["-snapshot", c.snapshot] : []),
    ...(c.extraArgs ?? []),
  ];
}
