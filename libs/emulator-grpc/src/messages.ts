/**
 * TypeScript shapes of the messages we serve and send, as the loader (LOADER_OPTIONS) decodes them:
 * proto field names, enums as numbers, 64-bit integers as numbers. Enum values mirror the .proto.
 */

export const ImgFormat = { PNG: 0, RGBA8888: 1, RGB888: 2 } as const;
export type ImgFormatValue = (typeof ImgFormat)[keyof typeof ImgFormat];

/** ImageTransport.TransportChannel: MMAP = the pixels go into a shared memory region the client named, not the answer. */
export const TransportChannel = { TRANSPORT_CHANNEL_UNSPECIFIED: 0, MMAP: 1 } as const;

export const SkinRotation = { PORTRAIT: 0, LANDSCAPE: 1, REVERSE_PORTRAIT: 2, REVERSE_LANDSCAPE: 3 } as const;

export const KeyCodeType = { Usb: 0, Evdev: 1, XKB: 2, Win: 3, Mac: 4 } as const;
export const KeyEventType = { keydown: 0, keyup: 1, keypress: 2 } as const;

export const RunState = {
  UNKNOWN: 0, RUNNING: 1, RESTORE_VM: 2, PAUSED: 3, SAVE_VM: 4, SHUTDOWN: 5, TERMINATE: 7, RESET: 9, INTERNAL_ERROR: 10,
} as const;

export const SnapshotLoadStatus = { Compatible: 0, Incompatible: 1, Loaded: 2 } as const;
export const SnapshotFilterStatus = { CompatibleOnly: 0, All: 1 } as const;

export interface RotationMsg {
  rotation: number;
  xAxis?: number;
  yAxis?: number;
  zAxis?: number;
}

export interface ImageTransportMsg {
  channel: number;
  /** `file:///path` (a file mapped by both sides) or a POSIX shared memory name. */
  handle: string;
}

export interface ImageFormatMsg {
  format: number;
  rotation?: RotationMsg | null;
  width: number;
  height: number;
  display?: number;
  transport?: ImageTransportMsg | null;
}

export interface ImageMsg {
  format: ImageFormatMsg;
  width: number;
  height: number;
  image: Buffer | Uint8Array;
  seq: number;
  timestampUs: number;
}

export interface TouchMsg {
  x: number;
  y: number;
  identifier: number;
  pressure: number;
  touch_major?: number;
  touch_minor?: number;
  expiration?: number;
}

export interface TouchEventMsg {
  touches: TouchMsg[];
  display?: number;
}

export interface MouseEventMsg {
  x: number;
  y: number;
  buttons: number;
  display?: number;
}

export interface KeyboardEventMsg {
  codeType: number;
  eventType: number;
  keyCode: number;
  key: string;
  text: string;
}

/** InputEvent (one of its kinds set; the simulator acts on touch, key and mouse events). */
export interface InputEventMsg {
  key_event?: KeyboardEventMsg;
  touch_event?: TouchEventMsg;
  mouse_event?: MouseEventMsg;
}

export interface EntryMsg {
  key: string;
  value: string;
}

export interface EmulatorStatusMsg {
  version: string;
  uptime: number;
  booted: boolean;
  vmConfig?: { hypervisorType: number; numberOfCpuCores: number; ramSizeBytes: number } | null;
  hardwareConfig: { entry: EntryMsg[] } | null;
}

export interface VmRunStateMsg {
  state: number;
}

export interface SnapshotPackageMsg {
  snapshot_id: string;
  payload?: Buffer | Uint8Array;
  success: boolean;
  err: Buffer | Uint8Array;
  format?: number;
  path?: string;
}

export interface SnapshotDetailsMsg {
  snapshot_id: string;
  details: {
    logical_name?: string;
    creation_time?: number;
    rotation?: number;
    description?: string;
    version?: number;
  } | null;
  status: number;
  size: number;
}

export interface SnapshotListMsg {
  snapshots: SnapshotDetailsMsg[];
}
