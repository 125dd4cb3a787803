/**
 * @module @farm/frames
 * Frames of the episodes: encoded off the event loop (libvips through sharp), PNG or a lossy JPEG / WebP,
 * at the device's size or a configured one.
 *
 *   const spec = parseFrameSpec("jpeg:85");            // or an error message
 *   const rec = new FrameRecorder(spec);               // one per episode
 *   await rec.add(step, { width, height, channels: 4, data: rgba });   // returns at once
 *   const frames = await rec.finish();                 // Map<step, bytes>
 */
export { encodeFrame, type RawFrame } from "./encode.ts";
export { FrameRecorder, type FrameRecorderStats } from "./recorder.ts";
export { rgbaToRgb } from "./pixels.ts";
export { parseFrameSpec, formatFrameSpec, DEFAULT_FRAME_SPEC, type FrameFormat, type FrameSpec } from "./spec.ts";
