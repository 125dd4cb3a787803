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
