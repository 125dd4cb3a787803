import { runSafely, type CommandIO, type DeviceBackend } from "./backend.ts";
import { ChunkQueue } from "./chunk-queue.ts";
import { InteractiveShell } from "./interactive-shell.ts";
import { V2FrameReader, V2_CLOSE_STDIN, V2_STDERR, V2_STDIN, V2_STDOUT, encodeV2, encodeV2Exit } from "./shell-v2.ts";
import type { AdbStream } from "./stream.ts";

function toBytes(chunk: Uint8Array | string): Uint8Array {
  return typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
}

/** Host data of a raw stream as command stdin; it ends when the stream closes (raw has no EOF mark). */
function rawStdin(stream: AdbStream): ChunkQueue {
  const stdin = new ChunkQueue();
  stream.onData = (d) => stdin.push(d);
  stream.signal.addEventListener("abort", () => stdin.end(), { once: true });
  return stdin;
}

/**
 * Legacy `shell:` and `exec:`: raw bytes, stderr merged into stdout, no exit status; the stream
 * closes when the command ends. An empty `shell:` command is an interactive line shell.
 */
export function startRawShell(backend: DeviceBackend, command: string, stream: AdbStream): void {
  const write = (c: Uint8Array | string) => stream.write(toBytes(c));
  if (command.trim() === "") {
    const shell = new InteractiveShell(backend, { write, writeErr: write }, stream.signal);
    stream.onData = (d) => shell.feed(d);
    void shell.done.then(() => stream.close());
    return;
  }
  const io: CommandIO = { write, writeErr: write, stdin: rawStdin(stream), signal: stream.signal };
  void runSafely(backend, command, io).then(() => stream.close());
}

/** `shell,v2,…:`: stdout/stderr/exit framed; stdin and close-stdin arrive framed too. */
export function startShellV2(backend: DeviceBackend, command: string, stream: AdbStream): void {
  const frames = new V2FrameReader();
  const emit = (id: number) => (c: Uint8Array | string) => {
    for (const f of encodeV2(id, toBytes(c), stream.maxData)) stream.write(f);
  };
  const out = { write: emit(V2_STDOUT), writeErr: emit(V2_STDERR) };
  let exitSent = false;
  const finish = (code: number) => {
    if (exitSent) return; // the exit packet goes out exactly once, whatever the host sends
    exitSent = true;
    stream.write(encodeV2Exit(code));
    stream.close();
  };

  if (command.trim() === "") {
    const shell = new InteractiveShell(backend, out, stream.signal);
    stream.onData = (d) => {
      for (const f of frames.push(d)) {
        if (f.id === V2_STDIN) shell.feed(f.payload);
        else if (f.id === V2_CLOSE_STDIN) shell.endInput();
      }
    };
    void shell.done.then(finish);
    return;
  }

  const stdin = new ChunkQueue();
  stream.onData = (d) => {
    for (const f of frames.push(d)) {
      if (f.id === V2_STDIN) stdin.push(Buffer.from(f.payload));
      else if (f.id === V2_CLOSE_STDIN) stdin.end();
    }
  };
  stream.signal.addEventListener("abort", () => stdin.end(), { once: true });
  void runSafely(backend, command, { ...out, stdin, signal: stream.signal }).then(finish);
}
