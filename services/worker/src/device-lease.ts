/**
 * Leasing a whole device of this host for a remote world (dm_env_rpc): the small interface the remote
 * environment server uses, implemented on today's per-device slots. A lease takes an idle device out of
 * the campaign pool (its job worker pauses) until `release()`. Kept to `lease()` / `release()` so it can be
 * pointed at a host-wide device pool without touching the server.
 */
import type { DeviceSession } from "@farm/episode";
import type { LoadedTask } from "@farm/task";

/** What a slot hands its leaseholder (DeviceSlot.leaseHooks). */
export interface SlotLeaseHooks {
  /** Resolves once no campaign job runs on the device any more. */
  paused: Promise<void>;
  sessionFor(task: LoadedTask): Promise<DeviceSession>;
  release(): Promise<void>;
}

export interface DeviceLease {
  readonly serial: string;
  /** The device's session bound to `task` (runs the task's setup when the device was bound to another). */
  sessionFor(task: LoadedTask): Promise<DeviceSession>;
  /** Gives the device back to the campaign pool. Idempotent. */
  release(): Promise<void>;
}

export interface DevicePool {
  /** An idle device of this host, or undefined when none is idle. */
  lease(): DeviceLease | undefined;
}

interface LeasableSlot {
  readonly serial: string;
  leaseHooks(): SlotLeaseHooks | undefined;
}

/** A pool over the slots `slots()` lists right now (WorkerService's map). */
export function slotDevicePool(slots: () => Iterable<LeasableSlot>): DevicePool {
  return {
    lease() {
      for (const slot of slots()) {
        const hooks = slot.leaseHooks();
        if (!hooks) continue;
        let released: Promise<void> | undefined;
        return {
          serial: slot.serial,
          sessionFor: async (task) => {
            await hooks.paused;
            return hooks.sessionFor(task);
          },
          release: () => (released ??= hooks.release()),
        };
      }
      return undefined;
    },
  };
}
