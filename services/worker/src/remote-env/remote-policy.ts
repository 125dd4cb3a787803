/**
 * The policy of a remote world: the client chose the answer already (StepRequest: a touch or a UI action,
 * step-answer.ts); `act` hands it to the episode runner, which then runs the step exactly as for any policy.
 * `needsPixels` and `needsElements` follow what the client asked to observe on its latest step.
 */
import type { Policy, PolicyAnswer } from "@farm/policy";

export const REMOTE_POLICY_NAME = "remote:dm_env_rpc";

export class RemotePolicy implements Policy {
  readonly name = REMOTE_POLICY_NAME;
  readonly version = "v1";
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
