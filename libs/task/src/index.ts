/**
 * @module @farm/task
 * Task definitions in protobuf text format (all three AndroidEnv dialects) loaded into one typed model.
 */
export type * from "./model.ts";
