/** Test rig for the emulator tests: private HOME / discovery / AVD folders, the adb CLI with that HOME, raw console sessions. */
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { freePort, isReservedPort } from "@farm/local-services";

export interface TempEnv {
  home: string;
  env: NodeJS.ProcessEnv;
  tokenPath: string;
  runningDir: string;
  cleanup(): void;
}

/** A private HOME (console token), XDG_RUNTIME_DIR (discovery files) and ANDROID_AVD_HOME. */
export function tempEnv(): TempEnv {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "emu-test-"));
  const home = path.join(root, "home");
  const xdg = path.join(root, "xdg");
  const avdHome = path.join(root, "avd");
  for (const d of [home, xdg, avdHome]) fs.mkdirSync(d);
  return {
    home,
    tokenPath: path.join(home, ".emulator_console_auth_token"),
    runningDir: path.join(xdg, "avd", "running"),
    env: { ...process.env, HOME: home, XDG_RUNTIME_DIR: xdg, ANDROID_AVD_HOME: avdHome },
    cleanup: () => fs.rmSync(root, { recursive: true, force: true }),
  };
}

/** An even console port N with N and N+1 free, outside the reserved ranges. */
export async function freeConsolePort(): Promise<number> {
  for (;;) {
    const p = await freePort();
    const even = p - (p % 2);
    if (isReservedPort(even) || isReservedPort(even + 1) || even < 1024) continue;
    if ((await portFree(even)) && (await portFree(even + 1))) return even;
  }
}

/** A base console port for `count` devices: base..base+2·count-1 and base+grpcOffset.. +count-1 all free. */
export async function freeConsoleRange(count: number, grpcOffset: number): Promise<number> {
  for (;;) {
    const base = await freeConsolePort();
    const ports = [...Array.from({ length: 2 * count }, (_, i) => base + i), ...Array.from({ length: count }, (_, i) => base + grpcOffset + i)];
    if (ports.some((p) => p > 65535 || isReservedPort(p))) continue;
    let ok = true;
    for (const p of ports) if (!(await portFree(p))) ok = false;
    if (ok) return base;
  }
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once("error", () => resolve(false));
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
  });
}

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
