/**
 * Leasing a whole device of this host for a remote world (dm_env_rpc): the small interface the remote
 * environment server uses, over the host's device pool (device-pool.ts) and the device's slot. A lease
 * takes an idle device out of the campaign pool until `release()`.
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
  leaseHooks(poolLease: { release(): void }): SlotLeaseHooks | undefined;
}

/** What the host's device pool (device-pool.ts) offers: an idle device taken out of the job pool. */
interface HostPool {
  lease(): { readonly serial: string; release(): void } | undefined;
}

/** Leases from the host's device pool, bound to the device's slot (its session and state). */
export function hostDevicePool(pool: HostPool, slotOf: (serial: string) => LeasableSlot | undefined): DevicePool {
  return {
    lease() {
      const poolLease = pool.lease();
      if (!poolLease) return undefined;
      const hooks = slotOf(poolLease.serial)?.leaseHooks(poolLease);
      if (!hooks) {
        poolLease.release();
        return undefined;
      }
      let released: Promise<void> | undefined;
      return {
        serial: poolLease.serial,
        sessionFor: async (task) => {
          await hooks.paused;
          return hooks.sessionFor(task);
        },
        release: () => (released ??= hooks.release()),
      };
    },
  };
}
