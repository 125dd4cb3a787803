/**
 * @module @farm/task
 * Task definitions in protobuf text format (all three AndroidEnv dialects) loaded into one typed model.
 */
export type * from "./model.ts";
export { loadTaskFile, parseTaskText, loadTaskSet, expandTaskPaths, type LoadOptions, type ParseOptions } from "./load.ts";
export { TaskLoadError, formatTaskError, type TaskErrorCode } from "./errors.ts";
export { pyRegex, pyRegexAround, PyRegexError, REGEX_LIMITS } from "./pyregex.ts";
export { findApk, resolveApk } from "./apk.ts";
export { TASK_LIMITS, TASK_ID_PATTERN } from "./limits.ts";
export { taskHash, canonicalJson } from "./hash.ts";
export { TaskCatalog, type CatalogTask, type TaskCatalogOptions } from "./catalog.ts";
export { taskToText, TaskConvertError, type TargetDialect } from "./write-text.ts";
export { RESET_MODES, DEFAULT_RESET_MODE, isResetMode, startSnapshotRefusal, gameConfigRefusal, GAME_CONFIG_EXTRA, type ResetMode } from "./reset-modes.ts";
