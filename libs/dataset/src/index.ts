/**
 * @module @farm/dataset
 * Data sets that training pipelines read directly: trajectory files (libs/trajectory) exported as a
 * Hugging Face-loadable folder of Parquet shards, and SQL over it with DuckDB.
 */
export { exportParquet, type ExportOptions, type ExportReport } from "./export.ts";
export { formatExportReport } from "./report.ts";
export { queryDataset, formatTable, type QueryResult } from "./query.ts";
export { type Manifest, type ShardEntry } from "./manifest.ts";
export { stepColumns, DATASET_LAYOUTS, type ColumnDef, type ColumnType, type DatasetLayout } from "./tables.ts";
export { ExtrasSpec, type ExtraColumn } from "./extras-spec.ts";
export { parquetBytes, type ParquetCompression } from "./parquet-file.ts";
export { arrowSchema, buildTable } from "./arrow-table.ts";
export { ShardRows } from "./rows.ts";
export { openDatasetDb, DatasetReadError, type DatasetDb, type DatasetReadErrorCode } from "./dataset-db.ts";
export {
  evaluateDataset,
  evaluateInput,
  evaluate,
  type EvaluationInput,
  compareSides,
  wilsonInterval,
  rateDifference,
  WILSON_Z,
  type Evaluation,
  type EvaluationSide,
  type EvaluationRow,
  type OutcomeRow,
  type TaskDifference,
  type Interval,
  type Difference,
  type EvaluateOptions,
} from "./evaluation.ts";
export {
  openEpisodeSource,
  openAvroEpisodeSource,
  openDatasetEpisodeSource,
  episodeViewOf,
  imageType,
  screenSizeOf,
  MAX_LIST,
  type EpisodeSource,
  type EpisodeListItem,
  type EpisodeView,
  type EpisodeFilter,
  type StepView,
  type CheckView,
  type ScreenElements,
  type ScreenAvailability,
} from "./episode-view.ts";
