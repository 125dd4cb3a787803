import { StringDecoder } from "node:string_decoder";
import { runSafely, type CommandIO, type DeviceBackend } from "./backend.ts";
import { emptyInput } from "./chunk-queue.ts";

/**
 * A shell opened with an empty command: host data is split into lines (it arrives cut at arbitrary
 * points) and each line runs in order. Deliberately no echo, no prompt and LF only, so callers can
 * match per-command end markers (§4.3). `exit [N]` or end of input ends it.
 */
export class InteractiveShell {
  private readonly decoder = new StringDecoder("utf8");
  private partial = "";
  private chain: Promise<void> = Promise.resolve();
  private lastCode = 0;
  private exited = false;
  private inputEnded = false;
  private resolveDone!: (code: number) => void;
  /** Resolves with the exit code once `exit` ran, input ended and drained, or the stream closed. */
  readonly done: Promise<number> = new Promise((resolve) => (this.resolveDone = resolve));

  constructor(
    private readonly backend: DeviceBackend,
    private readonly out: Pick<CommandIO, "write" | "writeErr">,
    private readonly signal: AbortSignal,
  ) {
    signal.addEventListener("abort", () => this.resolveDone(this.lastCode), { once: true });
  }

  feed(data: Uint8Array): void {
    if (this.inputEnded) return;
    this.partial += this.decoder.write(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    let nl: number;
    while ((nl = this.partial.indexOf("\n")) >= 0) {
      const line = this.partial.slice(0, nl).replace(/\r$/, "");
      this.partial = this.partial.slice(nl + 1);
      this.enqueue(line);
    }
  }

  endInput(): void {
    if (this.inputEnded) return;
    this.inputEnded = true;
    const rest = this.partial + this.decoder.end();
    this.partial = "";
    if (rest.trim()) this.enqueue(rest);
    this.chain = this.chain.then(() => this.resolveDone(this.lastCode));
  }

  private enqueue(line: string): void {
    this.chain = this.chain.then(async () => {
      if (this.exited || this.signal.aborted) return;
      const exit = /^\s*exit(?:\s+(\d+))?\s*$/.exec(line);
      if (exit) {
        this.exited = true;
        this.resolveDone(exit[1] === undefined ? this.lastCode : Number(exit[1]) & 0xff);
        return;
      }
      if (!line.trim()) return;
      this.lastCode = await runSafely(this.backend, line, {
        write: (c) => this.out.write(c),
        writeErr: (c) => this.out.writeErr(c),
        stdin: emptyInput(),
        signal: this.signal,
      });
    });
  }
}
