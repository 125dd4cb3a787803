/**
 * @module @farm/task
 * Task definitions in protobuf text format (all three AndroidEnv dialects) loaded into one typed model.
 */
export type * from "./model.ts";
export { loadTaskFile, parseTaskText, loadTaskSet, expandTaskPaths, type LoadOptions, type ParseOptions } from "./load.ts";
export { TaskLoadError, formatTaskError, type TaskErrorCode } from "./errors.ts";
export { pyRegex, pyRegexAround, PyRegexError } from "./pyregex.ts";
export { findApk } from "./apk.ts";
export { TASK_LIMITS, FAMILY_LIMITS, PARAM_NAME_PATTERN } from "./limits.ts";
export { FAMILY_SUFFIX, isFamilyPath, familyHash } from "./family.ts";
export { canonicalJson } from "./hash.ts";
export { TaskCatalog, type CatalogTask, type TaskCatalogOptions } from "./catalog.ts";
export { taskToText, TaskConvertError, type TargetDialect } from "./write-text.ts";
export { RESET_MODES, isResetMode, startSnapshotRefusal, gameConfigRefusal, GAME_CONFIG_EXTRA, type ResetMode } from "./reset-modes.ts";
