/** Test rig for the emulator tests: private HOME / discovery / AVD folders, the adb CLI with that HOME, raw console sessions. */
import { spawn } from "node:child_process";
import net from "node:net";
export { freeConsolePort, freeConsoleRange, tempEnv, type TempEnv } from "../src/testing.ts";






/** The real adb CLI against a private server, with the given environment (HOME decides the console token it sends). */
export function adbWithEnv(port: number, serial: string | undefined, args: string[], env: NodeJS.ProcessEnv, timeoutMs = 15_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.env.ADB_BIN ?? "adb", ["-P", String(port), ...(serial ? ["-s", serial] : []), ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.stdout.on("data", (b: Buffer) => (stdout += b.toString()));
    child.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A raw console session: send lines, read until a pattern shows up. */
export class ConsoleClient {
  private buf = "";
  private closed = false;
  private waiters: (() => void)[] = [];

  private constructor(readonly socket: net.Socket) {
    socket.on("data", (b: Buffer) => {
      this.buf += b.toString("utf8");
      this.wake();
    });
    socket.on("close", () => {
      this.closed = true;
      this.wake();
    });
    socket.on("error", () => {});
  }

  static connect(port: number): Promise<ConsoleClient> {
    return new Promise((resolve, reject) => {
      const s = net.connect({ port, host: "127.0.0.1" });
      s.once("connect", () => resolve(new ConsoleClient(s)));
      s.once("error", reject);
    });
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  send(text: string): void {
    this.socket.write(text);
  }

  /** Everything received up to and including the first match of `re` (consumed), or throws after timeoutMs. */
  async readUntil(re: RegExp, timeoutMs = 10_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = re.exec(this.buf);
      if (m) {
        const end = m.index + m[0].length;
        const out = this.buf.slice(0, end);
        this.buf = this.buf.slice(end);
        return out;
      }
      if (this.closed) throw new Error(`console closed before ${re}; got ${JSON.stringify(this.buf)}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${re} within ${timeoutMs} ms; got ${JSON.stringify(this.buf)}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, left);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  /** Resolves once the server has closed the session. */
  async waitClosed(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed) {
      if (Date.now() > deadline) throw new Error("console session still open");
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  close(): void {
    this.socket.destroy();
  }
}
