/**
 * @module @farm/policy
 * Policies choose actions from observations: seeded random, scripted, module, remote (HTTP).
 */
export type * from "./types.ts";
