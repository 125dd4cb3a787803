/**
 * Ports for a launched emulator, chosen as the emulator itself would (console on an even port from
 * 5554, adb on console+1, gRPC on console+3000) but checked free by binding them, so several workers or
 * a leftover process on the host do not collide with us.
 */
import { portFree } from "@farm/net-ports";

export interface EmulatorPorts {
  /** Console port (even); the serial is `emulator-<console>`. */
  console: number;
  /** adb port = console + 1 (adb names an emulator after its adb port − 1). */
  adb: number;
  grpc: number;
}

/** The real emulator's console range is 5554..5682; we look a little further on busy hosts. */
export const CONSOLE_PORT_MIN = 5554;
export const CONSOLE_PORT_MAX = 5998;
const GRPC_OFFSET = 3000;

/**
 * The first free (console, adb, gRPC) triple from `from` on, skipping ports in `taken` (ours, in use by
 * emulators still starting). Throws when the range is exhausted.
 */
export async function pickEmulatorPorts(taken: ReadonlySet<number>, from = CONSOLE_PORT_MIN): Promise<EmulatorPorts> {
  const start = from % 2 === 0 ? from : from + 1;
  for (let c = start; c <= CONSOLE_PORT_MAX; c += 2) {
    const g = c + GRPC_OFFSET;
    if (taken.has(c) || taken.has(c + 1) || taken.has(g)) continue;
    if ((await portFree(c)) && (await portFree(c + 1)) && (await portFree(g))) return { console: c, adb: c + 1, grpc: g };
  }
  throw new RangeError(`no free emulator ports in ${start}..${CONSOLE_PORT_MAX} (console, console+1, console+${GRPC_OFFSET})`);
}

/** Whether all three ports are still free (a relaunch keeps its serial when they are). */
export async function portsStillFree(p: EmulatorPorts): Promise<boolean> {
  return (await portFree(p.console)) && (await portFree(p.adb)) && (await portFree(p.grpc));
}
