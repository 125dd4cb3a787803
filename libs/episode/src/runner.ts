/**
 * `runEpisode`: one whole episode on a session's port, reset → steps → finish (see episode-run.ts for the
 * semantics). `DeviceSession.runEpisode` is the public door; `DeviceSession.startEpisode` hands out the
 * `EpisodeRun` for a caller that drives the steps itself.
 */
import { EpisodeRun, type RunEpisodeOptions } from "./episode-run.ts";
import type { SessionPort } from "./session-port.ts";
import type { EpisodeTrajectory } from "./trajectory-types.ts";

export { DEVICE_TROUBLE } from "./episode-end.ts";
export type { RunEpisodeOptions } from "./episode-run.ts";

export async function runEpisode(port: SessionPort, opts: RunEpisodeOptions): Promise<EpisodeTrajectory> {
  const run = await EpisodeRun.start(port, opts);
  await run.reset();
  while (await run.step()) {
    /* the next step */
  }
  return run.finish();
}
