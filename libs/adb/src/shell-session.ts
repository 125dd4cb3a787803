/**
 * One long-lived `shell:sh` per device for the driver's shell commands. `sh` reads its commands from the stream
 * (no terminal: nothing echoed, output byte for byte); each command runs as `sh -c '<line>' </dev/null 2>&1`
 * (its own shell: it can neither read the next commands nor change this session's directory or variables, and
 * its `exit` ends only itself), followed by `echo <marker>`, whose line ends the command's output. That saves a
 * connection to the adb server per command (~0.45 → ~0.1 ms of the worker's CPU, and the server's and the
 * device's work of a new stream). One command at a time: a caller that finds the session busy takes a one-shot
 * connection instead. After a timeout, an error or the device going away the session is dropped, and the next
 * command opens a new one.
 */
import type net from "node:net";
import { shQuote } from "@farm/shell-words";
import { OutputBuffer, outputTooLong, type ShellSocket } from "./shell-socket.ts";
import { openService } from "@farm/adb-wire";

interface Running {
  data(b: Buffer): void;
  /** The stream ended or failed: settle with what came, or the error. */
  end(e?: Error): void;
}

export class ShellSession {
  private sock: net.Socket | undefined;
  private started = false;
  private queued: string | undefined;
  private running: Running | undefined;

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly serial: string,
  ) {}

  /** A command is running (or the session is opening for one). */
  get busy(): boolean {
    return this.running !== undefined;
  }

  /** Whether a command line can go through a session: one line (sh reads its commands a line at a time). */
  static accepts(commandLine: string): boolean {
    return !/[\r\n]/.test(commandLine);
  }

  /**
   * Runs `commandLine`; `output` resolves with its output and then `<marker>\n`, or with what came before the
   * session's stream ended (the device went away or the command ended the session: the caller checks).
   */
  exec(commandLine: string, marker: string): ShellSocket {
    if (this.running) throw new Error("shell session busy");
    let settle!: { resolve(b: Buffer): void; reject(e: Error): void };
    const output = new Promise<Buffer>((resolve, reject) => (settle = { resolve, reject }));
    const out = new OutputBuffer();
    const end = `${marker}\n`;
    let tail = "";
    const running: Running = {
      data: (b) => {
        if (!out.push(b)) return this.drop(outputTooLong());
        tail = (tail + b.toString("latin1")).slice(-end.length);
        if (tail !== end) return this.nudge();
        this.running = undefined;
        settle.resolve(out.bytes);
      },
      end: (e) => {
        this.running = undefined;
        if (e) settle.reject(e);
        else settle.resolve(out.bytes);
      },
    };
    this.running = running;
    this.send(`sh -c ${shQuote(commandLine)} </dev/null 2>&1; echo ${marker}\n`);
    // Only while this command runs: a late call (the deadline's cleanup runs twice) never drops the next command's session.
    const destroy = (): void => {
      if (this.running === running) this.drop(new Error("shell session dropped at the deadline"));
    };
    return { output, destroy };
  }

  /**
   * Output came but not the end: send an empty line (a no-op for sh), so our TCP ACK goes at once with it. The
   * adb server writes a command's output and the marker line as separate small segments; with Nagle on its side
   * and delayed ACKs on ours, the marker would otherwise wait ~40 ms (measured: p50 44 ms per command with output).
   */
  private nudge(): void {
    if (this.started) this.sock?.write("\n");
  }

  /** Ends the session; a running command rejects with `why`. */
  drop(why: Error = new Error("shell session closed")): void {
    const sock = this.sock;
    this.sock = undefined;
    this.started = false;
    this.queued = undefined;
    sock?.destroy();
    this.running?.end(why);
  }

  private send(input: string): void {
    if (this.sock && this.started) {
      this.sock.write(input);
      return;
    }
    this.queued = input;
    if (this.sock) return;
    const sock = openService({ host: this.host, port: this.port }, this.serial, "shell:sh", {
      started: () => {
        if (this.sock !== sock) return;
        this.started = true;
        if (this.queued !== undefined) sock.write(this.queued);
        this.queued = undefined;
      },
      data: (b) => {
        if (this.sock === sock) this.running?.data(b);
      },
      failed: (e) => {
        if (this.sock === sock) this.drop(e);
      },
      ended: () => {
        if (this.sock !== sock) return;
        this.sock = undefined;
        this.started = false;
        this.running?.end();
      },
    });
    // Idle sessions never keep a process alive.
    sock.unref();
    this.sock = sock;
  }
}

/** The driver's sessions, one per device serial; dropped with the driver. */
export class ShellSessions {
  private readonly bySerial = new Map<string, ShellSession>();

  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {}

  of(serial: string): ShellSession {
    let s = this.bySerial.get(serial);
    if (!s) {
      s = new ShellSession(this.host, this.port, serial);
      this.bySerial.set(serial, s);
    }
    return s;
  }

  close(): void {
    for (const s of this.bySerial.values()) s.drop();
    this.bySerial.clear();
  }
}
