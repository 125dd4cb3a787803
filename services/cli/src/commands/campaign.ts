/**
 * `farm submit`, `farm status`, `farm cancel` (and `farm watch`, in watch.ts): campaigns from the
 * command line. See campaign-access.ts for how they reach Redis or the HTTP API.
 */
import { existsSync, statSync } from "node:fs";
import type { Command } from "commander";
import type { CampaignStatus } from "@farm/scheduler";
import { addAccessOptions, withCampaignClient, type AccessOptions } from "./campaign-access.ts";
import { addLlmOptions, llmPolicyChoice, type LlmFlags, type LlmSettings } from "./llm-options.ts";
import { parseIntOption, parsePositiveNumberOption, parseResetModeOption } from "./options.ts";
import { addAgentOptions, type AgentFlags } from "./agent-flags.ts";
import type { ResetMode } from "@farm/task";
import type { CommandModule } from "./types.ts";
import { registerWatch } from "./watch.ts";
import { terminalSafe, terminalSafeJson } from "@farm/terminal-text";

interface SubmitOptions extends AccessOptions, AgentFlags, LlmFlags {
  episodes: string;
  policy: string;
  seed?: string;
  priority?: string;
  id?: string;
  maxSteps?: string;
  maxSec?: string;
  frameEncoding?: string;
  resetFromSnapshot?: boolean;
  reset?: string;
  stepTimeoutMs?: string;
  policyTimeoutMs?: string;
  groupSize?: string;
  resampleUniformGroups?: string;
  onAbandon?: string;
  operatorGraceSec?: string;
  operatorIdleSec?: string;
  json?: boolean;
}

/** `--policy human`: what an abandoned episode becomes, and the operator's grace and idle limits (job options.operator). */
function operatorOptions(o: SubmitOptions): { operator?: { onAbandon?: "retry" | "record"; graceSec?: number; idleSec?: number } } {
  if (o.onAbandon !== undefined && o.onAbandon !== "retry" && o.onAbandon !== "record") throw new Error(`--on-abandon must be retry or record, got '${o.onAbandon.slice(0, 40)}'`);
  const graceSec = parsePositiveNumberOption("operator-grace-sec", o.operatorGraceSec, 3600);
  const idleSec = parsePositiveNumberOption("operator-idle-sec", o.operatorIdleSec, 86_400);
  const op = { ...(o.onAbandon ? { onAbandon: o.onAbandon as "retry" | "record" } : {}), ...(graceSec !== undefined ? { graceSec } : {}), ...(idleSec !== undefined ? { idleSec } : {}) };
  return Object.keys(op).length ? { operator: op } : {};
}

/** One line per campaign, for `farm status` without an id. */
function oneLine(s: CampaignStatus): string {
  const pct = s.episodes > 0 ? ((100 * s.finished) / s.episodes).toFixed(1) : "0.0";
  const c = s.commits;
  const commits = c ? `\tcommitted ${c.committed}\tduplicates prevented ${c.duplicatesPrevented}\tquarantined ${c.quarantined}` : "";
  return `${s.id}\t${s.state}\t${s.spec.taskId}\t${s.finished}/${s.episodes} (${pct}%)\tfailed ${s.failed}\trunning ${s.running}${commits}\t${s.createdAt}`;
}

export function describeStatus(s: CampaignStatus): string {
  const lines = [
    `campaign ${s.id}: ${s.state}`,
    `  task ${s.spec.taskId} (${s.spec.taskHash.slice(0, 12)}…), policy ${s.spec.policy.spec}, base seed ${s.spec.baseSeed}, priority ${s.spec.priority}`,
    `  episodes ${s.episodes}: enqueued ${s.enqueued}, completed ${s.completed}, failed ${s.failed}, in flight ${s.inFlight} (running ${s.running}, waiting ${s.waiting})`,
    `  ${s.episodesPerSec.toFixed(2)} episodes/s${s.etaSec !== null ? `, ETA ${Math.round(s.etaSec)} s` : ""}; created ${s.createdAt}${s.finishedAt ? `, finished ${s.finishedAt}` : ""}`,
  ];
  const c = s.commits;
  if (c) {
    const retries = Object.entries(c.retriesByCause).map(([k, v]) => `${k} ${v}`).join(", ") || "none";
    lines.push(`  commits: committed ${c.committed}, duplicates prevented ${c.duplicatesPrevented}, completed from claim ${c.completedFromClaim}, quarantined files ${c.quarantined}; retries: ${retries}`);
  }
  const g = s.groups;
  if (g) {
    const f = (v: number | null) => (v === null ? "-" : v.toFixed(3));
    lines.push(`  groups of ${g.size}: ${g.completed}/${g.total} complete, ${g.uniform} uniform (all rewards equal), ${g.resampled}/${g.resampleLimit} re-sampled, ${g.failed} with a failed member; mean reward ${f(g.meanReward)}, mean std ${f(g.meanStd)}`);
  }
  if (s.stream) {
    const groups = s.stream.consumerGroups.map((c) => `${c.name} (pending ${c.pending}, lag ${c.lag ?? "?"})`).join(", ") || "none";
    lines.push(`  stream: ${s.stream.length} entries; consumer groups: ${groups}`);
  }
  if (s.summary) lines.push(`  summary ${JSON.stringify(s.summary)}`);
  return lines.join("\n");
}

export const campaignCommands: CommandModule = {
  register(program: Command) {
    const submit = addAccessOptions(addLlmOptions(
      program
        .command("submit")
        .description("submit a campaign: N episodes of a task with a policy; prints the campaign id (re-submitting the same campaign adds nothing)")
        .argument("<task>", "task file (its id and hash are used) or task id")
        .requiredOption("--episodes <n>", "number of episodes")
        .option("--policy <spec>", "random | scripted:<name> | module:<name> | http:<url> | llm (with --llm-endpoint, --llm-model) | llm:<model>@<endpoint> | human (operators at the scheduler's /operate)", "random")
        .option("--seed <n>", "base seed; episode i gets seed + i (default 0)")
        .option("--priority <p>", "0 (lowest) … 1000 (highest), default 500")
        .option("--id <id>", "campaign id (default: derived from task, policy, episodes, seed and options)")
        .option("--max-steps <n>", "per-episode step limit (overrides the task's)")
        .option("--max-sec <s>", "per-episode time limit in seconds (overrides the task's)")
        .option("--frame-every <n>", "record a frame every N steps (0 = none)")
        .option("--reset <mode>", "how each episode starts: steps (the task's reset steps; default) | setup-snapshot (a snapshot of the setup state, then the reset steps) | start-snapshot (a snapshot taken once after setup + reset steps, no reset steps); snapshots need emulators")
        .option("--reset-from-snapshot", "older form of --reset setup-snapshot")
        .option("--frame-encoding <spec>", "how frames are stored: png (default), jpeg[:Q], webp[:Q], optionally @WxH")
        .option("--step-timeout-ms <ms>", "per-step deadline")
        .option("--policy-timeout-ms <ms>", "policy deadline: one act() of the policy (default: the worker's, else what the policy needs, e.g. the llm policy's request timeout × tries + backoff)")
        .option("--group-size <k>", "GRPO-style groups: each task instance (seed, params, goal) runs K times, concurrently where devices allow; --episodes counts every run (groups × K)")
        .option("--resample-uniform-groups <n>", "with --group-size: a completed group whose K rewards are all equal is followed by a new instance, at most N times (the uniform group stays in the data)")
        .option("--on-abandon <what>", "--policy human: an episode its operator left becomes retry (back to the queue, nothing recorded; default) | record (committed as operator_abandoned)")
        .option("--operator-grace-sec <s>", "--policy human: how long a closed operator page keeps its episode (default 30)")
        .option("--operator-idle-sec <s>", "--policy human: the longest an operator may idle on one step (default 300)")
        .option("--json", "print the whole result as JSON instead of the id"),
    ));
    addAgentOptions(submit, "submit").action(async (taskArg: string, o: SubmitOptions) => {
      const isFile = existsSync(taskArg) && statSync(taskArg).isFile();
      let taskId = taskArg;
      let taskHash: string | undefined;
      let loaded: import("@farm/task").LoadedTask | undefined;
      const { goalsOf, observationOptions } = await import("./agent-options.ts");
      if (isFile) {
        const { loadTaskFile } = await import("@farm/task");
        const t = (loaded = loadTaskFile(taskArg));
        taskId = t.task.id;
        taskHash = t.hash;
      }
      const maxSec = parsePositiveNumberOption("max-sec", o.maxSec, 86_400);
      const options = {
        ...(o.maxSteps !== undefined ? { maxEpisodeSteps: parseIntOption("max-steps", o.maxSteps, 1) } : {}),
        ...(maxSec !== undefined ? { maxEpisodeSec: maxSec } : {}),
        ...observationOptions(o),
        ...(o.frameEncoding !== undefined ? { frameEncoding: o.frameEncoding } : {}),
        ...resetOptions(o),
        ...(o.stepTimeoutMs !== undefined ? { stepTimeoutMs: parseIntOption("step-timeout-ms", o.stepTimeoutMs, 1) } : {}),
        ...(o.policyTimeoutMs !== undefined ? { policyTimeoutMs: parseIntOption("policy-timeout-ms", o.policyTimeoutMs, 100) } : {}),
        ...operatorOptions(o),
      };
      const goals = await goalsOf(o, loaded); // a task file: its goals lines are checked against it here
      const input = {
        taskId,
        ...(taskHash ? { taskHash } : {}),
        episodes: parseIntOption("episodes", o.episodes, 1) ?? 0,
        policy: await submittedPolicy(o),
        ...(o.seed !== undefined ? { baseSeed: parseIntOption("seed", o.seed) } : {}),
        ...(o.priority !== undefined ? { priority: parseIntOption("priority", o.priority) } : {}),
        ...(o.id !== undefined ? { id: o.id } : {}),
        options,
        ...(goals ? { goals } : {}),
        ...(o.groupSize !== undefined ? { groupSize: parseIntOption("group-size", o.groupSize, 1) } : {}),
        ...(o.resampleUniformGroups !== undefined ? { resampleUniformGroups: parseIntOption("resample-uniform-groups", o.resampleUniformGroups, 0) } : {}),
      };
      const r = await withCampaignClient(o, (c) => c.submit(input), isFile ? [taskArg] : []);
      if (o.json) process.stdout.write(`${JSON.stringify(r)}\n`);
      else {
        process.stderr.write(r.created ? `submitted: ${r.campaign.episodes} episodes of ${r.campaign.spec.taskId}\n` : `campaign exists already; nothing added (${r.campaign.state}, ${r.campaign.finished}/${r.campaign.episodes})\n`);
        process.stdout.write(`${r.campaign.id}\n`);
      }
    });

    addAccessOptions(
      program
        .command("status")
        .description("show one campaign, or list campaigns (newest first)")
        .argument("[campaign]", "campaign id")
        .option("--json", "print JSON"),
    ).action(async (id: string | undefined, o: AccessOptions & { json?: boolean }) => {
      // Stored specs may hold a policy URL with a token in its query; ids and causes come from Redis.
      const { redactCredentials } = await import("@farm/queue/credentials");
      // Lines and tab-separated columns are our layout; control characters inside the values are escaped.
      const safeLine = (l: string) => l.split("\t").map((col) => terminalSafe(redactCredentials(col))).join("\t");
      const out = (text: string) => process.stdout.write(`${text.split("\n").map(safeLine).join("\n")}\n`);
      const outJson = (value: unknown) => process.stdout.write(`${terminalSafeJson(redactCredentials(JSON.stringify(value)))}\n`);
      await withCampaignClient(o, async (c) => {
        if (id) {
          const s = await c.status(id);
          if (o.json) outJson(s);
          else out(describeStatus(s));
        } else {
          const all = await c.list();
          if (o.json) outJson(all);
          else out(all.length ? all.map(oneLine).join("\n") : "no campaigns");
        }
      });
    });

    addAccessOptions(
      program
        .command("cancel")
        .description("cancel a campaign: stop enqueuing, remove waiting jobs (running episodes finish)")
        .argument("<campaign>", "campaign id"),
    ).action(async (id: string, o: AccessOptions) => {
      const s = await withCampaignClient(o, (c) => c.cancel(id));
      process.stdout.write(`${s.id}: ${s.state} (${s.finished}/${s.episodes} finished, ${s.inFlight} still in flight)\n`);
    });

    // A running campaign's policy version (issue 38): a learner raises it after each update; episodes that lag it by
    // more than the campaign's --max-staleness are stale.
    const campaign = program.command("campaign").description("a campaign's policy version: set-version (raise it while the campaign runs), version (show it)");
    addAccessOptions(
      campaign
        .command("set-version")
        .description("raise the campaign's current policy version (versions only go forward: a lower whole number or a version raised before is refused); workers see it within a second")
        .argument("<campaign>", "campaign id")
        .argument("<version>", "the new version: 1-128 printable characters (whole numbers compare as numbers)")
        .option("--json", "print the result as JSON"),
    ).action(async (id: string, version: string, o: AccessOptions & { json?: boolean }) => {
      const r = await withCampaignClient(o, (c) => c.raisePolicyVersion(id, { version }));
      if (o.json) process.stdout.write(`${terminalSafeJson(JSON.stringify(r))}\n`);
      else process.stdout.write(`${terminalSafe(r.campaignId)}: policy version ${terminalSafe(r.version ?? "")}${r.raised ? (r.previous !== undefined ? ` (was ${terminalSafe(r.previous)})` : " (the first)") : " (unchanged: already current)"}\n`);
    });
    addAccessOptions(
      campaign
        .command("version")
        .description("show the campaign's current policy version")
        .argument("<campaign>", "campaign id")
        .option("--json", "print JSON"),
    ).action(async (id: string, o: AccessOptions & { json?: boolean }) => {
      const r = await withCampaignClient(o, (c) => c.policyVersion(id));
      if (o.json) process.stdout.write(`${terminalSafeJson(JSON.stringify(r))}\n`);
      else process.stdout.write(`${terminalSafe(r.campaignId)}: ${r.version !== undefined ? `policy version ${terminalSafe(r.version)} (${r.versions} raised)` : "no policy version raised"}\n`);
    });

    registerWatch(program);
  },
};

/**
 * `--reset MODE` (or the older `--reset-from-snapshot`) as job options. `steps`, the default, adds nothing and the
 * older flag keeps its old option, so campaigns submitted before reset modes keep their derived ids.
 */
function resetOptions(o: SubmitOptions): { resetMode?: ResetMode; resetFromSnapshot?: true } {
  const mode = parseResetModeOption(o.reset);
  if (o.resetFromSnapshot && mode !== undefined && mode !== "setup-snapshot") throw new Error(`--reset-from-snapshot means --reset setup-snapshot; it contradicts --reset ${mode}`);
  if (o.resetFromSnapshot) return { resetFromSnapshot: true };
  return mode && mode !== "steps" ? { resetMode: mode } : {};
}

/** `--policy` as the campaign carries it: a spec, or for `llm` the spec with its settings (never the API key). */
async function submittedPolicy(o: SubmitOptions): Promise<string | { spec: string; llm: LlmSettings }> {
  const { loadPromptTemplate } = await import("@farm/policy/settings");
  const c = llmPolicyChoice(o.policy, o, loadPromptTemplate);
  return c.llm ? { spec: c.spec, llm: c.llm } : c.spec;
}
