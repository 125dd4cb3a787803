/**
 * Done-when of issue 27 item 4: a Python A11yService server (Debian's python3-grpcio, grpc.aio with
 * local server credentials as AndroidEnv's wrapper uses; stubs generated with protoc from our .proto
 * at test time) turns on a simulated device's forwarder through a real adb server with the exact
 * commands A11yGrpcWrapper sends, and checks the forests against the screen: every clickable node,
 * tapped at its centre with `adb shell input tap`, opens the app its text names; each tap sends a
 * view-clicked event; rotation swaps the bounds. Needs python3-grpcio, protobuf-compiler and
 * protobuf-compiler-grpc (deploy/bootstrap.sh).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { PROTO_DIR, PROTO_FILES } from "@farm/a11y-grpc";
import { startAdbServer } from "@farm/local-services";
import { SimDevice } from "../src/index.ts";
import { installPrebuilt } from "./android-helpers.ts";

const PYTHON = "/usr/bin/python3";
const HOST = fileURLToPath(new URL("./python/a11y_host.py", import.meta.url));

function run(cmd: string, args: string[], timeout: number): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(cmd, args, { timeout }, (err, stdout, stderr) =>
      err ? reject(new Error(`${cmd} ${args.join(" ")} failed (python3-grpcio, protobuf-compiler-grpc installed? run deploy/bootstrap.sh): ${err.message}\n${stderr}`)) : resolve(stdout),
    ),
  );
}

test("a Python A11yService server gets forests that match the screen from a device turned on as A11yGrpcWrapper does", async (t) => {
  const stubs = fs.mkdtempSync(path.join(os.tmpdir(), "a11y-stubs-"));
  const adb = await startAdbServer();
  let device: SimDevice | undefined;
  try {
    const plugin = await run("sh", ["-c", "command -v grpc_python_plugin"], 10_000);
    await run("protoc", [`-I${PROTO_DIR}`, `--python_out=${stubs}`, `--grpc_out=${stubs}`, `--plugin=protoc-gen-grpc=${plugin.trim()}`, ...PROTO_FILES.map((f) => path.join(PROTO_DIR, f))], 60_000);
    device = await SimDevice.start({ adbPort: adb.port });
    for (const apk of ["sim_notes.apk", "classic_2048.apk", "todo.apk", "sim_settings.apk"]) await installPrebuilt(device.android, apk);
    const out = await run(PYTHON, [HOST, stubs, String(adb.port), device.serial], 300_000);
    const summary = JSON.parse(out.trim().split("\n").pop()!) as { opened: string[]; with_field: string[]; typed: string | null; max_windows: number; dialog_windows: number; uiautomator_clickables: number; click_event_keys: string[]; rotated_nodes_moved: number; forests_logged: boolean };
    // Every launchable app's icon was tapped and opened its app (the Python side checked each).
    const launchable = device.android.system.packages.list().filter((p) => p.activities.length > 0 && p.name !== "com.android.launcher3");
    assert.ok(launchable.length >= 4);
    assert.deepEqual([...summary.opened].sort(), launchable.map((p) => p.label).sort());
    assert.ok(summary.click_event_keys.includes("source_text"));
    assert.ok(summary.rotated_nodes_moved > 0);
    assert.equal(summary.forests_logged, true);
    // Typing is checked in the first app whose first screen has an editable field (Todo's search): the
    // Python side fails if the text-changed event or the forest disagrees with what was typed.
    assert.ok(summary.with_field.includes("Todo"), `apps with a field on their first screen: ${summary.with_field.join(", ")}`);
    assert.equal(summary.typed, summary.with_field[0]);
    // uiautomator's dump, read with Python's xml.etree, named the same clickable nodes as the forest.
    assert.ok(summary.uiautomator_clickables >= 4);
    // Sim Settings' reset dialog came as a second window and went with CANCEL (checked on the Python side).
    assert.equal(summary.dialog_windows, 2);
  } finally {
    await device?.close();
    await adb.close();
    fs.rmSync(stubs, { recursive: true, force: true });
  }
});
