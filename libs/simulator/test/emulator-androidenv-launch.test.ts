/**
 * AndroidEnv's launch mode against our `emulator`: a Python script (Debian's python3-grpcio) picks the
 * ports as AndroidEnv's EmulatorSimulator does (adb in 5555..5585, console any unused port), starts the
 * emulator with EmulatorLauncher's command line and environment, waits for getStatus().booted over gRPC,
 * asks adb for `getprop sys.boot_completed` on emulator-<adb port - 1>, and shuts it down with
 * setVmState(SHUTDOWN). The adb server is a real one this test starts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { startAdbServer } from "@farm/local-services";
import { avdHome, createAvd } from "../src/index.ts";
import { tempEnv } from "./emulator-helpers.ts";

const PYTHON = "/usr/bin/python3";
const SCRIPT = fileURLToPath(new URL("./python/androidenv_launch.py", import.meta.url));
const EMULATOR = fileURLToPath(new URL("../sdk/emulator/emulator", import.meta.url));

test("AndroidEnv's launcher starts `emulator -ports C,A` with a random console port; gRPC, adb and shutdown work", async () => {
  const t = tempEnv();
  const adb = await startAdbServer();
  try {
    const home = avdHome(t.env);
    createAvd(home, "AndroidEnv_Sim", { width: 480, height: 800 });
    const out = await new Promise<string>((resolve, reject) =>
      execFile(PYTHON, [SCRIPT, EMULATOR, "AndroidEnv_Sim", String(adb.port), home], { env: t.env, timeout: 240_000 }, (err, stdout, stderr) =>
        err ? reject(new Error(`${PYTHON} ${SCRIPT} failed (python3-grpcio, protobuf-compiler-grpc installed? run deploy/bootstrap.sh): ${err.message}\n${stderr}`)) : resolve(stdout),
      ),
    );
    const r = JSON.parse(out.trim().split("\n").pop()!) as {
      console: number; adb: number; serial: string; booted: boolean; boot_completed: string; exit_code: number;
      discovery: Record<string, string> | null; discovery_after_exit: boolean; log_tail: string;
    };
    assert.equal(r.booted, true, r.log_tail);
    assert.equal(r.serial, `emulator-${r.adb - 1}`);
    assert.equal(r.boot_completed, "1", `adb -s ${r.serial} shell getprop sys.boot_completed\n${r.log_tail}`);
    assert.ok(r.discovery, `no discovery file\n${r.log_tail}`);
    assert.equal(r.discovery["port.adb"], String(r.adb));
    assert.equal(r.discovery["port.serial"], String(r.adb - 1), "port.serial is the number in the adb serial");
    assert.equal(r.discovery["port.console"], String(r.console));
    assert.equal(r.exit_code, 0, r.log_tail);
    assert.equal(r.discovery_after_exit, false, "the discovery file is removed on shutdown");
    assert.match(r.log_tail, /Boot completed in \d+ ms/);
  } finally {
    await adb.close();
    t.cleanup();
  }
});
