/**
 * Asking a launched emulator how it is: over its gRPC endpoint (`getStatus().booted`, `setVmState`) when it
 * serves one, else over the adb server (`getprop sys.boot_completed`, console-less `emu kill` is not needed: the
 * process group is signalled instead). Both go through the driver's own clients (@farm/adb: the lean gRPC client,
 * the adb shell), so the farm reaches an emulator one way; every call is bounded by a deadline.
 */
import { AdbDriver, emulatorCalls } from "@farm/adb";
import { RunState } from "@farm/emulator-grpc";

/** How a probe went: booted, up but still booting, or no answer within the deadline / an error. */
export type ProbeResult = { ok: true; booted: boolean } | { ok: false; error: string };

export interface StatusProbe {
  probe(timeoutMs: number): Promise<ProbeResult>;
  /** Asks the emulator to shut down (gRPC setVmState SHUTDOWN); false if it cannot be asked this way. */
  requestShutdown(timeoutMs: number): Promise<boolean>;
  close(): void;
}

/** The emulator's `EmulatorController` at 127.0.0.1:port, plain HTTP/2 as a local emulator serves it. */
export function grpcStatusProbe(port: number): StatusProbe {
  const ep = { address: `127.0.0.1:${port}` };
  return {
    async probe(timeoutMs) {
      const r = await emulatorCalls.getStatus(ep, timeoutMs);
      if (r.ok) return { ok: true, booted: r.value.booted === true };
      return { ok: false, error: `gRPC ${ep.address} getStatus: code ${r.err.code}: ${r.err.details}` };
    },
    async requestShutdown(timeoutMs) {
      return (await emulatorCalls.setVmState(ep, RunState.SHUTDOWN, timeoutMs)).ok;
    },
    // The endpoint's HTTP/2 session is shared with the driver's calls and unref'd: nothing to close here.
    close: () => undefined,
  };
}

/** No gRPC: `getprop sys.boot_completed` through the adb server (the device appears there once registered). */
export function adbStatusProbe(adb: { host: string; port: number }, serial: string): StatusProbe {
  const driver = new AdbDriver({ host: adb.host, port: adb.port, frameThreads: 1 });
  const device = driver.device(serial);
  return {
    async probe(timeoutMs) {
      const r = await device.shell("getprop sys.boot_completed", { timeoutMs });
      if (r.status === "ok") return { ok: true, booted: r.stdout.trim() === "1" };
      return { ok: false, error: `adb ${serial} getprop sys.boot_completed: ${r.message}` };
    },
    requestShutdown: () => Promise.resolve(false),
    close: () => void driver.close(),
  };
}
