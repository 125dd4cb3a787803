/**
 * The bound session of one device. A session is bound to one task (bind = logcat + action channel +
 * setup steps), so it is kept while jobs name the same task, and rebound when another task comes. A job's
 * limits (steps, seconds, step deadline) do not need a rebind: they go to `runEpisode({ limits })`.
 */
import type { Device } from "@farm/adb";
import { DeviceSession, type EpisodeConfig, type EventHook } from "@farm/episode";
import type { Logger } from "@farm/log";
import type { LoadedTask } from "@farm/task";

interface Bound {
  key: string;
  session: DeviceSession;
}

export class DeviceSessionCache {
  private bound: Bound | undefined;
  private closed = false;

  constructor(
    private readonly device: Device,
    private readonly episodeConfig: EpisodeConfig,
    private readonly logger: Logger,
    private readonly onEvent: EventHook,
    /** Told the task id before each bind (the worker declares the task's metric series at 0). */
    private readonly onBind?: (taskId: string) => void,
  ) {}

  get current(): DeviceSession | undefined {
    return this.bound?.session;
  }

  /**
   * The session for `loaded`, binding (setup steps) when needed.
   * Throws TaskNotRunnableError for a task that cannot run anywhere; a device that cannot be bound gives a
   * session in state `unusable` (the caller checks).
   */
  async sessionFor(loaded: LoadedTask): Promise<DeviceSession> {
    const key = `${loaded.task.id}@${loaded.hash}`;
    let b = this.bound;
    if (!b || b.key !== key || b.session.state === "closed") {
      await this.release();
      this.onBind?.(loaded.task.id);
      const session = await DeviceSession.open({ device: this.device, task: loaded, config: this.episodeConfig, logger: this.logger, onEvent: this.onEvent });
      if (this.closed) {
        // Closed while binding (the device went away or the worker drains): let the session go.
        await session.close();
        return session;
      }
      b = this.bound = { key, session };
    }
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
