/**
 * Asking a launched emulator how it is: over its gRPC endpoint (`getStatus().booted`, `setVmState`)
 * when it serves one, else over the adb server (`getprop sys.boot_completed`, console-less `emu kill`
 * is not needed: the process group is signalled instead). Every call is bounded by a deadline.
 */
import { createAdbClient, readAll } from "@farm/adb";
import { CLIENT_CHANNEL_OPTIONS, emulatorGrpc, grpc, RunState, type EmulatorStatusMsg } from "@farm/emulator-grpc";
import { coerceError } from "@farm/errors";
import { withDeadline } from "@farm/time";

/** How a probe went: booted, up but still booting, or no answer within the deadline / an error. */
export type ProbeResult = { ok: true; booted: boolean } | { ok: false; error: string };

export interface StatusProbe {
  probe(timeoutMs: number): Promise<ProbeResult>;
  /** Asks the emulator to shut down (gRPC setVmState SHUTDOWN); false if it cannot be asked this way. */
  requestShutdown(timeoutMs: number): Promise<boolean>;
  close(): void;
}

type Unary<Req, Res> = (req: Req, md: grpc.Metadata, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res: Res) => void) => void;
interface ControllerClient extends grpc.Client {
  getStatus: Unary<Record<string, never>, EmulatorStatusMsg>;
  setVmState: Unary<{ state: number }, unknown>;
}

function unary<Req, Res>(fn: Unary<Req, Res>, client: grpc.Client, req: Req, timeoutMs: number): Promise<Res> {
  return new Promise((resolve, reject) => {
    fn.call(client, req, new grpc.Metadata(), { deadline: Date.now() + timeoutMs }, (err, res) => (err ? reject(err) : resolve(res)));
  });
}

/** The emulator's `EmulatorController` at 127.0.0.1:port, plain HTTP/2 as a local emulator serves it. */
export function grpcStatusProbe(port: number): StatusProbe {
  const { EmulatorController } = emulatorGrpc();
  const client = new EmulatorController(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), CLIENT_CHANNEL_OPTIONS) as unknown as ControllerClient;
  return {
    async probe(timeoutMs) {
      try {
        const s = await unary(client.getStatus, client, {}, timeoutMs);
        return { ok: true, booted: s.booted === true };
      } catch (e) {
        return { ok: false, error: `gRPC 127.0.0.1:${port} getStatus: ${coerceError(e).message}` };
      }
    },
    async requestShutdown(timeoutMs) {
      try {
        await unary(client.setVmState, client, { state: RunState.SHUTDOWN }, timeoutMs);
        return true;
      } catch {
        return false;
      }
    },
    close: () => client.close(),
  };
}

/** No gRPC: `getprop sys.boot_completed` through the adb server (the device appears there once registered). */
export function adbStatusProbe(adb: { host: string; port: number }, serial: string): StatusProbe {
  const client = createAdbClient(adb);
  return {
    async probe(timeoutMs) {
      try {
        const work = client.getDevice(serial).shell("getprop sys.boot_completed").then(readAll);
        const out = await withDeadline(work, timeoutMs, () => new Error(`no answer within ${timeoutMs} ms`));
        return { ok: true, booted: out.toString().trim() === "1" };
      } catch (e) {
        return { ok: false, error: `adb ${serial} getprop sys.boot_completed: ${coerceError(e).message}` };
      }
    },
    requestShutdown: () => Promise.resolve(false),
    close: () => undefined,
  };
}
