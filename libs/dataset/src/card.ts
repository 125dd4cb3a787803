/** The data set card (`README.md`): YAML `configs` and `dataset_info` for Hugging Face, then prose. */
import { featuresYaml } from "./features.ts";
import type { Manifest } from "./manifest.ts";
import { EPISODE_COLUMNS, dataColumns, dataConfigName, type ColumnDef } from "./tables.ts";

function configInfo(name: string, columns: readonly ColumnDef[], examples: number, bytes: number): string[] {
  return [
    `- config_name: ${name}`,
    "  features:",
    ...featuresYaml(columns, "  "),
    "  splits:",
    "  - name: train",
    `    num_examples: ${examples}`,
    `  download_size: ${bytes}`,
  ];
}

export function datasetCard(m: Manifest): string {
  const layout = m.layout ?? "steps";
  const nested = layout === "episodes-nested";
  const data = dataConfigName(layout);
  const dataDefs = dataColumns(layout, m.extras);
  const rows = m.shards.reduce((n, s) => n + s.rows, 0);
  const episodes = m.shards.reduce((n, s) => n + s.episodeIds.length, 0);
  const bytes = m.shards.reduce((n, s) => n + s.bytes, 0);
  const yaml = [
    "---",
    "configs:",
    `- config_name: ${data}`,
    "  default: true",
    "  data_files:",
    "  - split: train",
    "    path: data/train-*",
    "- config_name: episodes",
    "  data_files:",
    "  - split: train",
    "    path: episodes/train-*",
    "dataset_info:",
    ...configInfo(data, dataDefs, rows, bytes),
    ...configInfo("episodes", EPISODE_COLUMNS, episodes, 0),
    "tags:",
    "- android",
    "- reinforcement-learning",
    "- trajectories",
    "- gui-agents",
    "---",
  ];
  const cols = (defs: readonly ColumnDef[]) => defs.map((c) => `| \`${c.name}\` | ${c.doc.replaceAll("|", "\\|")} |`);
  const body = [
    "",
    "# Android episode farm trajectories",
    "",
    `${episodes} episodes, ${nested ? `one row each (layout \`episodes-nested\`)` : `${rows} steps (layout \`steps\`)`} in ${m.shards.length} shard(s), Parquet (${m.compression}). Exported from the farm's Avro`,
    `trajectory files by \`farm trajectories export --format parquet${nested ? " --layout episodes-nested" : ""}\`; \`manifest.json\` lists the episodes of each shard.`,
    "",
    "```python",
    "from datasets import load_dataset",
    `${data} = load_dataset("path/to/this/folder")${" ".repeat(Math.max(1, 18 - data.length))}# config "${data}" (default)`,
    'episodes = load_dataset("path/to/this/folder", "episodes")',
    "```",
    "",
    nested
      ? "Screens and actions line up as in AndroidControl: `screenshots[i]`, `elements[i]` and `accessibility_trees[i]` are the screen `actions[i]` was chosen on; the last item is the screen after the last action."
      : "Each step row holds the screen its action was chosen on (BEFORE the action): `screenshot`, `elements` and `a11y_tree` of step k are the screen recorded after step k−1 (the initial screen for step 1); the screen after the last step is in `episodes` (`final_screenshot`, `final_elements`, `final_a11y_tree`). Each recorded frame is stored once.",
    "",
    `SQL: \`farm trajectories query "SELECT goal, avg((episode_return > 0)::INT) AS success_rate FROM episodes GROUP BY 1" <folder>\` (views \`${data}\` and \`episodes\`)`,
    "",
    "Episodes scored by the device's state (a task family's checks) carry `success` (0..1), `params` (JSON), `checks` (what each check read, and whether it passed) and `score_error` (the score could not be computed: never read it as 0): `SELECT task_id, avg(success) AS mean_success, count(score_error) AS score_errors FROM episodes GROUP BY 1`.",
    "",
    "Policy versions (a learner's weights): each step's `policy_version` (what the policy reported; null when it reported none) and `policy_ms` (how long it took to answer); each episode's `first_policy_version`, `last_policy_version` and `stale` (why it is too stale for a learner; null when not): `SELECT * FROM episodes WHERE stale IS NULL`.",
    "",
    nested ? "## trajectories (one row per episode, steps as lists)" : "## steps (one row per step)",
    "",
    "| column | meaning |",
    "|---|---|",
    ...cols(dataDefs),
    "",
    "## episodes (one row per episode)",
    "",
    "| column | meaning |",
    "|---|---|",
    ...cols(EPISODE_COLUMNS),
    "",
  ];
  return [...yaml, ...body].join("\n");
}
