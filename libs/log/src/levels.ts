/**
 * `@farm/log/levels`: the level names alone, for config modules that check FARM_LOG_LEVEL before (or without) a
 * logger; importing them does not load pino.
 */

/** The levels FARM_LOG_LEVEL takes (pino's, and "silent"). */
export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
