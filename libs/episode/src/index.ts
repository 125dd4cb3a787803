/**
 * @module @farm/episode
 * Runs setup, reset and the action loop of a task on one device, AndroidEnv's semantics without its failure modes.
 */
export type * from "./trajectory-types.ts";
