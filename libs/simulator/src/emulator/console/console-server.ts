/**
 * The emulator console: a telnet-style text service on the console port (loopback only), speaking
 * as the emulator does: the auth banner (or the help prompt when the token file is empty), one
 * command per line, text replies ending in `OK` or `KO: …`, `\r\n` line ends.
 *
 * Hostile clients: a line longer than 4 KiB is cut (the emulator's own buffer size), an HTTP request
 * line or bytes that are not UTF-8 end the session as the emulator does, at most 32 sessions at once,
 * and a client that does not read its replies stops being read from (no unbounded buffering).
 */
import net from "node:net";
import type { Logger } from "@farm/log";
import { silentLogger } from "@farm/log";
import { loadOrCreateToken, tokenMatches } from "./auth-token.ts";
import type { ConsoleBackend } from "./backend.ts";
import { MAIN_COMMANDS, PREAUTH_COMMANDS, runLine, type CommandContext, type CommandDef } from "./commands.ts";

const MAX_LINE = 4095;
const MAX_SESSIONS = 32;
/** Unread reply bytes after which the session stops reading commands until the client catches up. */
const MAX_PENDING_OUTPUT = 64 * 1024;
/** Lines queued behind a running command (e.g. a snapshot load) before reading pauses. */
const MAX_QUEUED_LINES = 64;
const HTTP_REQUEST_LINE = /^(GET|HEAD|POST|PUT|DELETE|CONNECT|OPTIONS|TRACE|PATCH) \S+ HTTP\/\d/;

export interface ConsoleOptions {
  backend: ConsoleBackend;
  /** The console auth token file (default `~/.emulator_console_auth_token`). */
  tokenPath: string;
  logger?: Logger;
}

export class EmulatorConsole {
  private readonly sessions = new Set<net.Socket>();
  private closed = false;

  private constructor(readonly port: number, private readonly server: net.Server, private readonly opts: ConsoleOptions) {
    server.on("connection", (s) => this.accept(s));
  }

  /** Listens on 127.0.0.1:port (rejects with the listen error when the port is taken). */
  static async listen(port: number, opts: ConsoleOptions): Promise<EmulatorConsole> {
    // Like the emulator at start-up: create the token file now so a user can read it before connecting.
    if (loadOrCreateToken(opts.tokenPath) === undefined) {
      (opts.logger ?? silentLogger).warn({ event: "console:token-unreadable", path: opts.tokenPath }, "console auth token file unreadable: console will refuse sessions");
    }
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
    return new EmulatorConsole(port, server, opts);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.sessions) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(socket: net.Socket): void {
    if (this.closed || this.sessions.size >= MAX_SESSIONS) {
      socket.destroy();
      return;
    }
    const token = loadOrCreateToken(this.opts.tokenPath);
    if (token === undefined) {
      socket.destroy(); // CONSOLE_AUTH_STATUS_ERROR: the emulator drops the client
      return;
    }
    socket.setNoDelay(true);
    this.sessions.add(socket);
    socket.once("close", () => this.sessions.delete(socket));
    socket.on("error", () => socket.destroy());
    const session = new ConsoleSession(socket, this.opts, token === "");
    // One line per session (not per command): what a console user did, for the emulator's log.
    socket.once("close", () =>
      (this.opts.logger ?? silentLogger).info(
        { event: "console:session", port: this.port, commands: session.commands, authenticated: session.authenticated, ended: session.ended },
        "console session ended",
      ),
    );
  }
}

/** One client: splits its bytes into lines and runs them one after another. */
class ConsoleSession {
  commands = 0;
  ended: "client" | "quit" | "kill" | "crash" | "refused" = "client";
  private table: CommandDef[];
  private line: number[] = [];
  private readonly queue: Buffer[] = [];
  private running = false;
  private finished = false;
  private readonly context: CommandContext;

  constructor(private readonly socket: net.Socket, private readonly opts: ConsoleOptions, authDisabled: boolean) {
    this.table = authDisabled ? MAIN_COMMANDS : PREAUTH_COMMANDS;
    this.context = {
      backend: opts.backend,
      write: (text) => this.write(text),
      authenticate: (given) => {
        const expected = loadOrCreateToken(opts.tokenPath);
        if (expected === undefined || !tokenMatches(expected, given)) return false;
        this.table = MAIN_COMMANDS;
        return true;
      },
    };
    if (authDisabled) this.write("Android Console: type 'help' for a list of commands\r\nOK\r\n");
    else {
      this.write(
        "Android Console: Authentication required\r\n" +
          "Android Console: type 'auth <auth_token>' to authenticate\r\n" +
          `Android Console: you can find your <auth_token> in \r\n'${opts.tokenPath}'\r\nOK\r\n`,
      );
    }
    socket.on("data", (chunk: Buffer) => this.onData(chunk));
    socket.on("drain", () => this.resumeIfRoom());
  }

  get authenticated(): boolean {
    return this.table === MAIN_COMMANDS;
  }

  private write(text: string): void {
    if (!this.socket.destroyed) this.socket.write(text);
  }

  private onData(chunk: Buffer): void {
    for (const byte of chunk) {
      if (this.finished) return;
      if (byte === 0x0d) continue; // '\r' is filtered out, as the emulator does
      if (byte === 0x0a) {
        this.queue.push(Buffer.from(this.line));
        this.line = [];
        continue;
      }
      if (this.line.length >= MAX_LINE) this.line = []; // the emulator restarts an overlong line
      this.line.push(byte);
    }
    if (this.queue.length > MAX_QUEUED_LINES) this.socket.pause();
    void this.drainQueue();
  }

  private resumeIfRoom(): void {
    if (!this.finished && this.queue.length <= MAX_QUEUED_LINES && this.socket.writableLength < MAX_PENDING_OUTPUT) this.socket.resume();
  }

  private async drainQueue(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (!this.finished && this.queue.length > 0) {
        const raw = this.queue.shift()!;
        await this.runRaw(raw);
        if (this.socket.writableLength >= MAX_PENDING_OUTPUT) this.socket.pause();
        else this.resumeIfRoom();
      }
    } finally {
      this.running = false;
    }
  }

  private async runRaw(raw: Buffer): Promise<void> {
    let line: string;
    try {
      line = new TextDecoder("utf-8", { fatal: true }).decode(raw);
    } catch {
      this.ended = "refused";
      return this.abort("KO: Forbidden binary request. Aborting\r\n");
    }
    if (HTTP_REQUEST_LINE.test(line)) {
      this.ended = "refused";
      return this.abort("KO: Forbidden HTTP request. Aborting\r\n");
    }
    this.commands++;
    let outcome;
    try {
      outcome = await runLine(this.context, line, this.table);
    } catch (e) {
      outcome = "ko" as const;
      this.write(`KO: internal error: ${e instanceof Error ? e.message : String(e)}\r\n`);
    }
    switch (outcome) {
      case "ok":
        return this.write("OK\r\n");
      case "ko":
        return;
      case "quit":
        this.ended = "quit";
        return this.abort("");
      case "kill":
        this.ended = "kill";
        this.write("OK: killing emulator, bye bye\r\n");
        return this.endThen(() => this.opts.backend.kill());
      case "crash":
        this.ended = "crash";
        this.write("OK: crashing emulator, bye bye\r\n");
        return this.endThen(() => this.opts.backend.crash());
    }
  }

  private abort(text: string): void {
    this.finished = true;
    this.queue.length = 0;
    if (text) this.write(text);
    this.socket.end();
  }

  /** Flushes the reply, then hands over (kill / crash take the whole emulator down). */
  private endThen(action: () => void): void {
    this.finished = true;
    this.queue.length = 0;
    let done = false;
    const once = () => {
      if (done) return;
      done = true;
      action();
    };
    this.socket.end(once);
    // A client that never reads must not keep the emulator alive.
    setTimeout(once, 1000).unref();
  }
}
