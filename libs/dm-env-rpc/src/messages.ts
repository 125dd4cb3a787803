/**
 * dm_env_rpc v1 messages as @grpc/proto-loader hands them to JavaScript with LOADER_OPTIONS: snake_case
 * field names, enums and 64-bit integers as numbers, `payload` naming the oneof member that is set.
 */

/** DataType values (dm_env_rpc.proto). */
export const DataType = { INVALID_DATA_TYPE: 0, FLOAT: 1, DOUBLE: 2, INT8: 3, INT32: 4, INT64: 5, UINT8: 6, UINT32: 7, UINT64: 8, BOOL: 9, STRING: 10, PROTO: 11 } as const;
export type DataTypeValue = (typeof DataType)[keyof typeof DataType];

/** EnvironmentStateType values. */
export const EnvironmentState = { INVALID_ENVIRONMENT_STATE: 0, RUNNING: 1, TERMINATED: 2, INTERRUPTED: 3 } as const;

export type TensorPayloadName = "floats" | "doubles" | "int8s" | "int32s" | "int64s" | "uint8s" | "uint32s" | "uint64s" | "bools" | "strings" | "protos";

export interface Tensor {
  floats?: { array: number[] };
  doubles?: { array: number[] };
  int8s?: { array: Uint8Array };
  int32s?: { array: number[] };
  int64s?: { array: number[] };
  uint8s?: { array: Uint8Array };
  uint32s?: { array: number[] };
  uint64s?: { array: number[] };
  bools?: { array: boolean[] };
  strings?: { array: string[] };
  protos?: { array: unknown[] };
  payload?: TensorPayloadName;
  shape?: number[];
}

export interface TensorSpec {
  name: string;
  shape: number[];
  dtype: DataTypeValue;
  min?: Record<string, { array: unknown }>;
  max?: Record<string, { array: unknown }>;
}

export interface ActionObservationSpecs {
  actions: Record<string, TensorSpec>;
  observations: Record<string, TensorSpec>;
}

export interface Status {
  code: number;
  message: string;
  details?: unknown[];
}

export type Settings = Record<string, Tensor>;

export interface EnvironmentRequest {
  create_world?: { settings?: Settings };
  join_world?: { world_name?: string; settings?: Settings };
  step?: { actions?: Record<string, Tensor>; requested_observations?: number[] };
  reset?: { settings?: Settings };
  reset_world?: { world_name?: string; settings?: Settings };
  leave_world?: Record<string, never>;
  destroy_world?: { world_name?: string };
  extension?: unknown;
  payload?: "create_world" | "join_world" | "step" | "reset" | "reset_world" | "leave_world" | "destroy_world" | "extension";
}

export interface EnvironmentResponse {
  create_world?: { world_name: string };
  join_world?: { specs: ActionObservationSpecs };
  step?: { state: number; observations: Record<string, Tensor> };
  reset?: { specs: ActionObservationSpecs };
  reset_world?: Record<string, never>;
  leave_world?: Record<string, never>;
  destroy_world?: Record<string, never>;
  error?: Status;
  payload?: "create_world" | "join_world" | "step" | "reset" | "reset_world" | "leave_world" | "destroy_world" | "extension" | "error";
}
