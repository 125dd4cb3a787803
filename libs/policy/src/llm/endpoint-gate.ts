/**
 * The per-endpoint concurrency limit: one gate per endpoint URL for the whole process, shared by every llm
 * policy that talks to it (a worker host's devices must not flood one model server). The limit in force is the
 * smallest any open policy on that endpoint asked for; the gate goes away with its last policy.
 */
import { PolicyError } from "../errors.ts";

interface Waiter {
  grant: () => void;
}

class Gate {
  readonly limits = new Map<number, number>();
  active = 0;
  readonly waiters: Waiter[] = [];

  limit(): number {
    let min = Infinity;
    for (const l of this.limits.values()) min = Math.min(min, l);
    return min === Infinity ? 1 : min;
  }

  pump(): void {
    while (this.waiters.length > 0 && this.active < this.limit()) {
      this.active++;
      this.waiters.shift()!.grant();
    }
  }
}

const gates = new Map<string, Gate>();
let nextId = 1;

export interface GateTicket {
  /** Waits for a place (or the signal); the returned function gives it back. */
  acquire(signal?: AbortSignal): Promise<() => void>;
  /** This policy no longer counts toward the endpoint's limit. */
  leave(): void;
}

/** `endpoint`: the gate's key; `where`: how messages name it (without credentials or query values). */
export function joinGate(endpoint: string, limit: number, where: string): GateTicket {
  let gate = gates.get(endpoint);
  if (!gate) {
    gate = new Gate();
    gates.set(endpoint, gate);
  }
  const g = gate;
  const id = nextId++;
  g.limits.set(id, limit);
  const release = (): void => {
    g.active--;
    g.pump();
  };
  return {
    acquire(signal) {
      const aborted = () => new PolicyError("aborted", `${where}: aborted by the caller while waiting for a free request slot`);
      if (signal?.aborted) return Promise.reject(aborted());
      return new Promise((resolve, reject) => {
        const onAbort = () => {
          const i = g.waiters.indexOf(waiter);
          if (i >= 0) g.waiters.splice(i, 1);
          reject(aborted());
        };
        const waiter: Waiter = {
          grant: () => {
            signal?.removeEventListener("abort", onAbort);
            let once = false;
            resolve(() => {
              if (once) return;
              once = true;
              release();
            });
          },
        };
        signal?.addEventListener("abort", onAbort, { once: true });
        g.waiters.push(waiter);
        g.pump();
      });
    },
    leave() {
      if (!g.limits.delete(id)) return;
      if (g.limits.size === 0 && g.active === 0 && g.waiters.length === 0) gates.delete(endpoint);
      else g.pump();
    },
  };
}
