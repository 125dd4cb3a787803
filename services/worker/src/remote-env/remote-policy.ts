/**
 * The policy of a remote world: the client chose the action already (StepRequest); `act` hands it to the
 * episode runner, which then runs the step exactly as for any policy. `needsPixels` follows what the
 * client asked to observe on its latest step.
 */
import type { Action, Policy } from "@farm/policy";

export const REMOTE_POLICY_NAME = "remote:dm_env_rpc";

export class RemotePolicy implements Policy {
  readonly name = REMOTE_POLICY_NAME;
  readonly version = "v1";
  needsPixels = true;
  private next: Action | undefined;

  /** The action for the step about to run. */
  give(action: Action): void {
    this.next = action;
  }

  async reset(): Promise<void> {}

  async act(): Promise<Action> {
    const a = this.next;
    this.next = undefined;
    if (!a) throw new Error("no action from the remote client for this step");
    return a;
  }

  async close(): Promise<void> {}
}
