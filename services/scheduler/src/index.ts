/**
 * @module @farm/scheduler
 * Campaigns in, episode jobs out: windowed enqueueing with deterministic job ids, exact progress
 * counting, cancel, summaries, an HTTP API with /metrics and bull-board.
 *
 *   const running = await runScheduler(loadSchedulerConfig({ port: 0 }));   // the whole service
 *   const s = await Scheduler.create({ redisUrl, tasks }); await s.submit({ taskId, episodes: 40 });
 */
export { Scheduler, DEFAULT_WINDOW_SIZE, ENQUEUE_BATCH, type SchedulerOptions, type SubmitResult, type CampaignPolicyVersion } from "./scheduler.ts";
export { startSchedulerHttp, type SchedulerHttp, type SchedulerHttpOptions } from "./http.ts";
export { HttpCampaignClient, type CampaignClient } from "./campaign-client.ts";
export { SCHEDULER_ROUTES } from "./http.ts";
export { runScheduler, runSchedulerUntilSignal, type RunningScheduler } from "./main.ts";
export { loadSchedulerConfig, DEFAULT_SCHEDULER_PORT, type SchedulerConfig, type SchedulerFlags } from "./config.ts";
export {
  campaignInputSchema,
  parseCampaignInput,
  deriveCampaignId,
  episodeSeed,
  MAX_CAMPAIGN_EPISODES,
  type CampaignInput,
  type CampaignSpec,
} from "./campaign-spec.ts";
export type { CampaignStatus, CampaignSummary } from "./campaign-status.ts";
export type { CampaignState } from "./campaign-store.ts";
export { staticTaskCatalog, folderTaskCatalog, type TaskCatalog, type CatalogTask } from "./task-catalog.ts";
export { SchedulerError, type SchedulerErrorCode } from "./errors.ts";
export { startViewerServer, DEFAULT_VIEWER_PORT, type ViewerServer, type ViewerServerOptions } from "./viewer-server.ts";
export { reportHtml, type ReportPageOptions } from "./report-page.ts";
