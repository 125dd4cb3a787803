/**
 * A Python grpcio client with grpc.local_channel_credentials() (how emulator tooling connects on
 * loopback) reaches a simulated device's gRPC endpoint: status, an RGBA8888 screenshot, a touch.
 * Needs Debian's python3-grpcio (deploy/bootstrap.sh installs it).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { startGrpcRig } from "./grpc-helpers.ts";

const PYTHON = "/usr/bin/python3";
const CLIENT = fileURLToPath(new URL("./python/local_creds_client.py", import.meta.url));

test("Python grpcio with local_channel_credentials connects and calls getStatus, getScreenshot, sendTouch", async () => {
  const rig = await startGrpcRig();
  try {
    const { server } = await rig.start();
    const out = await new Promise<string>((resolve, reject) =>
      execFile(PYTHON, [CLIENT, String(server.port)], { timeout: 60_000 }, (err, stdout, stderr) =>
        err ? reject(new Error(`${PYTHON} ${CLIENT} failed (is python3-grpcio installed? run deploy/bootstrap.sh): ${err.message}\n${stderr}`)) : resolve(stdout),
      ),
    );
    assert.deepEqual(JSON.parse(out.trim().split("\n").pop()!), { booted: true, width: 360, height: 640, image_bytes: 360 * 640 * 4 });
  } finally {
    await rig.close();
  }
});
