/** The data set card (`README.md`): YAML `configs` and `dataset_info` for Hugging Face, then prose. */
import { featuresYaml } from "./features.ts";
import type { Manifest } from "./manifest.ts";
import { EPISODE_COLUMNS, stepColumns, type ColumnDef } from "./tables.ts";

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
  const steps = m.shards.reduce((n, s) => n + s.rows, 0);
  const episodes = m.shards.reduce((n, s) => n + s.episodeIds.length, 0);
  const bytes = m.shards.reduce((n, s) => n + s.bytes, 0);
  const yaml = [
    "---",
    "configs:",
    "- config_name: steps",
    "  default: true",
    "  data_files:",
    "  - split: train",
    "    path: data/train-*",
    "- config_name: episodes",
    "  data_files:",
    "  - split: train",
    "    path: episodes/train-*",
    "dataset_info:",
    ...configInfo("steps", stepColumns(m.extras), steps, bytes),
    ...configInfo("episodes", EPISODE_COLUMNS, episodes, 0),
    "tags:",
    "- android",
    "- reinforcement-learning",
    "- trajectories",
    "---",
  ];
  const cols = (defs: readonly ColumnDef[]) => defs.map((c) => `| \`${c.name}\` | ${c.doc.replaceAll("|", "\\|")} |`);
  const body = [
    "",
    "# Android episode farm trajectories",
    "",
    `${episodes} episodes, ${steps} steps in ${m.shards.length} shard(s), Parquet (${m.compression}). Exported from the farm's Avro`,
    "trajectory files by `farm trajectories export --format parquet`; `manifest.json` lists the episodes of each shard.",
    "",
    "```python",
    "from datasets import load_dataset",
    'steps = load_dataset("path/to/this/folder")                 # config "steps" (default)',
    'episodes = load_dataset("path/to/this/folder", "episodes")',
    "```",
    "",
    "SQL: `farm trajectories query \"SELECT task_id, avg(episode_return) FROM episodes GROUP BY 1\" <folder>`",
    "",
    "## steps (one row per step)",
    "",
    "| column | meaning |",
    "|---|---|",
    ...cols(stepColumns(m.extras)),
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
