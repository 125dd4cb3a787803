/**
 * @module @farm/adb
 * The only code that talks to devices: discovery, step commands, action channel, logcat, app-screen check, screenshots.
 */
export type * from "./types.ts";
