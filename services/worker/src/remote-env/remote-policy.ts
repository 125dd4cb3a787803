/**
 * The policy of a remote world (dm_env_rpc, OpenEnv): the client chose the answer already (a touch or a UI action);
 * `act` hands it to the episode runner, which then runs the step exactly as for any policy. `needsPixels` and
 * `needsElements` follow what the client asked to observe on its latest step.
 */
import type { Policy, PolicyAnswer } from "@farm/policy";

export const REMOTE_POLICY_NAME = "remote:dm_env_rpc";

export class RemotePolicy implements Policy {
  readonly version = "v1";

  /** `name`: the protocol the client speaks, as trajectories record it (`remote:dm_env_rpc`, `remote:openenv`). */
  constructor(readonly name: string = REMOTE_POLICY_NAME) {}

  needsPixels = true;
  /** The screen as elements is read every step while the client requests `elements`. */
  needsElements = false;
  private next: PolicyAnswer | undefined;

  /** The answer for the step about to run. */
  give(answer: PolicyAnswer): void {
    this.next = answer;
  }

  async reset(): Promise<void> {}

  async act(): Promise<PolicyAnswer> {
    const a = this.next;
    this.next = undefined;
    if (!a) throw new Error("no action from the remote client for this step");
    return a;
  }

  async close(): Promise<void> {}
}
