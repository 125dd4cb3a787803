/**
 * @module @farm/trajectory
 * The farm's output data set: episodes as Avro object container files (schema in SCHEMA.md), written
 * atomically by partition (many per file with TrajectoryWriter, or one per file under a fixed name with
 * writeEpisodeFile) and read back, inspected and exported.
 */
export { episodeSchema } from "./schema.ts";
export { episodeIdOf } from "./episode-id.ts";
export { TrajectoryError, CODEC_NAMES, type CodecName, type EpisodeRecord, type StoredEpisode, type TrajectoryErrorCode } from "./types.ts";
export { writeEpisodeFile, type WriteEpisodeFileOptions, type EpisodeFileTarget, type WrittenEpisodeFile } from "./episode-file.ts";
export { episodeFilePath, findEpisodeFile, readEpisodeFile, removeStaleEpisodeTempFiles, type EpisodeFileLocation } from "./episode-files.ts";
export { TrajectoryWriter, type TrajectoryWriterOptions, type TrajectoryWriterStats, type ClosedTrajectoryFile } from "./writer.ts";
export { readTrajectories, listTrajectoryFiles, openTrajectoryFile, type ReadOptions, type OpenedTrajectoryFile, type TrajectoryFileListing } from "./reader.ts";
export { groupStats, summarizeGroups, type GroupStat, type GroupMemberFacts, type GroupsSummary } from "./group-stats.ts";
export { inspectTrajectories, formatSummary, type TrajectorySummary, type DuplicateEpisode, type DuplicateOccurrence } from "./inspect.ts";
export { inFolder } from "./partition.ts";
export { avroTypeFor } from "./logical-types.ts";
export { avscEncoderCodecs } from "./block-codecs.ts";
export { episodeToJson } from "./export-json.ts";
export { type ReadLimits, type ReadLimitOptions } from "./read-limits.ts";
export { episodeToAvro, type AvroEpisode } from "./episode-codec.ts";
export { syntheticEpisode, type SyntheticEpisodeOptions } from "./synthetic.ts";
