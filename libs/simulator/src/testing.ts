/**
 * A kit for testing against simulated emulators from any package (`@farm/simulator/testing`): private
 * HOME / XDG_RUNTIME_DIR / ANDROID_AVD_HOME folders, free console port ranges, the real adb CLI against a
 * private server, and polling until a condition holds.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort, isReservedPort, portFree } from "@farm/net-ports";
import { sleep } from "@farm/time";

// Internals only the simulator's own tests use (not part of the public face, `@farm/simulator`).
export { buildSimApk, PREBUILT_APKS } from "./android/index.ts";

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

export interface CliResult {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/** Runs the real adb CLI against the private server: `adb -P port -s serial args…`. */
export function adbCli(port: number, serial: string | undefined, args: string[], opts: { input?: Uint8Array | string; timeoutMs?: number; bin?: string } = {}): Promise<CliResult> {
  const full = ["-P", String(port), ...(serial ? ["-s", serial] : []), ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(opts.bin ?? "adb", full, { stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    let err = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 15_000);
    child.stdout.on("data", (b: Buffer) => out.push(b));
    child.stderr.on("data", (b: Buffer) => (err += b.toString()));
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out), stderr: err });
    });
    if (opts.input !== undefined) child.stdin.end(opts.input);
    else child.stdin.end();
  });
}

/** Polls `check` every 20 ms until it holds or `timeoutMs` passes; returns whether it held. */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await sleep(20);
  }
}
