/**
 * The farm holds AndroidEnv's AdbRequest twice: in the task schema (@farm/task's current.proto, for task files'
 * setup/reset steps) and in this package's adb.proto (the task protocol's device calls). Both must stay AndroidEnv's:
 * every message and field the task schema declares must be in adb.proto with the same number, type and label.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import protobuf from "protobufjs";
import { taskType } from "@farm/task/testing";

const protocolRoot = new protobuf.Root().loadSync(fileURLToPath(new URL("../proto/android_env/proto/adb.proto", import.meta.url)), { keepCase: true });
protocolRoot.resolveAll();

/** name → "number type label" of each field, and the nested messages and enums, recursively. */
function shapeOf(t: protobuf.Type | protobuf.Enum): Record<string, string> {
  const out: Record<string, string> = {};
  if (t instanceof protobuf.Enum) {
    for (const [name, n] of Object.entries(t.values)) out[name] = String(n);
    return out;
  }
  for (const f of t.fieldsArray) out[f.name] = `${f.id} ${f.type} ${f.repeated ? "repeated" : "single"}${f.partOf ? ` oneof ${f.partOf.name}` : ""}`;
  for (const nested of t.nestedArray) {
    if (nested instanceof protobuf.Type || nested instanceof protobuf.Enum) {
      for (const [k, v] of Object.entries(shapeOf(nested))) out[`${nested.name}.${k}`] = v;
    }
  }
  return out;
}

test("the task schema's AdbRequest is a part of the task protocol's adb.proto, field for field", () => {
  const inTask = shapeOf(taskType("current").root.lookupType("android_env.AdbRequest"));
  const inProtocol = shapeOf(protocolRoot.lookupType("android_env.AdbRequest"));
  assert.ok(Object.keys(inTask).length > 40, "the task schema's AdbRequest has its request kinds");
  const differ = Object.entries(inTask).filter(([k, v]) => inProtocol[k] !== v).map(([k, v]) => `${k}: task ${v}, protocol ${inProtocol[k] ?? "missing"}`);
  assert.deepEqual(differ, []);
});

test("both copies agree on AndroidEnv's request kinds (the oneof's members and numbers)", () => {
  const kinds = (t: protobuf.Type) => Object.fromEntries(t.oneofs["command"]!.fieldsArray.map((f) => [f.name, f.id]));
  const inTask = kinds(taskType("current").root.lookupType("android_env.AdbRequest"));
  const inProtocol = kinds(protocolRoot.lookupType("android_env.AdbRequest"));
  for (const [name, id] of Object.entries(inTask)) assert.equal(inProtocol[name], id, name);
});
