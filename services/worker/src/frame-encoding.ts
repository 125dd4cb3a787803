/** A job's `frameEncoding` text (validated by the queue's job schema) as the runner's option. */
import { parseFrameSpec, type FrameSpec } from "@farm/frames";

export function frameEncodingOf(text: string | undefined): { frameEncoding?: FrameSpec } {
  if (text === undefined) return {};
  const spec = parseFrameSpec(text);
  // The job schema already rejected a bad one; never fail an episode over it here.
  return typeof spec === "string" ? {} : { frameEncoding: spec };
}
