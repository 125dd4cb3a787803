/** The farm's own .proto schemas (proto/current.proto, proto/legacy.proto), loaded once at runtime with keepCase. */
import protobuf from "protobufjs";
import { fileURLToPath } from "node:url";

export type SchemaName = "current" | "legacy";

const cache = new Map<SchemaName, protobuf.Type>();

/** The `android_env.Task` type of one schema. Each schema gets its own Root: both declare package android_env. */
export function taskType(schema: SchemaName): protobuf.Type {
  let type = cache.get(schema);
  if (!type) {
    const file = fileURLToPath(new URL(`../proto/${schema}.proto`, import.meta.url));
    type = new protobuf.Root().loadSync(file, { keepCase: true }).lookupType("android_env.Task");
    type.root.resolveAll();
    cache.set(schema, type);
  }
  return type;
}
