/**
 * The bound session of one device. A session is bound to one task (bind = logcat + action channel +
 * setup steps), so it is kept while jobs name the same task and settings, and rebound when they change.
 */
import type { Device } from "@farm/adb";
import { DeviceSession, type EpisodeConfig, type EventHook } from "@farm/episode";
import type { Logger } from "@farm/log";
import type { EpisodeOptions } from "@farm/queue";
import type { LoadedTask } from "@farm/task";

interface Bound {
  key: string;
  session: DeviceSession;
  /** A private copy of the task whose limits are set per job (the runner reads them at each episode). */
  task: LoadedTask;
  original: LoadedTask;
}

export class DeviceSessionCache {
  private bound: Bound | undefined;
  private closed = false;

  constructor(
    private readonly device: Device,
    private readonly episodeConfig: EpisodeConfig,
    private readonly logger: Logger,
    private readonly onEvent: EventHook,
  ) {}

  get current(): DeviceSession | undefined {
    return this.bound?.session;
  }

  /**
   * The session for `loaded` with the job's options applied, binding (setup steps) when needed.
   * Throws TaskNotRunnableError for a task that cannot run anywhere; a device that cannot be bound gives a
   * session in state `unusable` (the caller checks).
   */
  async sessionFor(loaded: LoadedTask, options: EpisodeOptions = {}): Promise<DeviceSession> {
    const stepTimeoutMs = options.stepTimeoutMs ?? this.episodeConfig.stepTimeoutMs;
    const key = `${loaded.task.id}@${loaded.hash}/${stepTimeoutMs ?? "default"}`;
    let b = this.bound;
    if (!b || b.key !== key || b.session.state === "closed") {
      await this.release();
      const task: LoadedTask = { ...loaded, task: { ...loaded.task } };
      const session = await DeviceSession.open({
        device: this.device,
        task,
        config: { ...this.episodeConfig, ...(stepTimeoutMs !== undefined ? { stepTimeoutMs } : {}) },
        logger: this.logger,
        onEvent: this.onEvent,
      });
      if (this.closed) {
        // Closed while binding (the device went away or the worker drains): let the session go.
        await session.close();
        return session;
      }
      b = this.bound = { key, session, task, original: loaded };
    }
    // Job limits override the task's (the runner reads task.maxEpisodeSteps / maxEpisodeSec per episode).
    b.task.task.maxEpisodeSteps = options.maxEpisodeSteps ?? b.original.task.maxEpisodeSteps;
    b.task.task.maxEpisodeSec = options.maxEpisodeSec ?? b.original.task.maxEpisodeSec;
    return b.session;
  }

  /** Closes the session and refuses to bind again. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    await this.release();
  }

  private async release(): Promise<void> {
    const b = this.bound;
    this.bound = undefined;
    if (b) await b.session.close().catch((e: unknown) => this.logger.warn({ event: "session:close-failed", err: String(e) }, "session close failed"));
  }
}
