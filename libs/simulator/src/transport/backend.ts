/**
 * What the transport needs from the simulated Android behind it. SimAndroid (src/android) satisfies
 * this structurally; keeping it here lets the protocol code be tested and read on its own.
 */
export interface CommandIO {
  write(chunk: Uint8Array | string): void;
  writeErr(chunk: Uint8Array | string): void;
  stdin: AsyncIterable<Uint8Array>;
  signal: AbortSignal;
}

export interface FileInfo {
  mode: number;
  size: number;
  mtimeSec: number;
}

export interface DeviceBackend {
  run(commandLine: string, io: CommandIO): Promise<number>;
  framebuffer(): { width: number; height: number; rgba: Uint8Array };
  readonly fs: {
    stat(path: string): FileInfo | undefined;
    list(dir: string): (FileInfo & { name: string })[] | undefined;
    read(path: string): Uint8Array | undefined;
    write(path: string, data: Uint8Array, mode: number, mtimeSec: number): void;
  };
  readonly faults: { latencyMs(commandClass: string): number };
  /**
   * adbd's `root:` / `unroot:` services: the message adbd writes, and whether adbd now restarts
   * (which drops the transport; the device comes back a moment later). Absent: refused, as before.
   */
  restartAdbd?(mode: "root" | "unroot"): { message: string; restart: boolean };
}

/** Runs a command and never rejects: an internal error becomes a message on stderr and exit 255. */
export async function runSafely(backend: DeviceBackend, commandLine: string, io: CommandIO): Promise<number> {
  try {
    return await backend.run(commandLine, io);
  } catch (e) {
    io.writeErr(`sh: ${e instanceof Error ? e.message : String(e)}\n`);
    return 255;
  }
}

/** The farm's one sleep (re-exported for the transport's files). */
export { sleep } from "@farm/time";
