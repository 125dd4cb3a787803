/**
 * The host-level batcher for remote policies (`http-batch:<url>`, PROTOCOL.md "Batched mode"): the
 * policies of all devices of one worker process that name the same URL hand their step (and episode-end)
 * messages to one queue; the first pending message waits at most `windowMs` for others (or until
 * `maxBatch` are pending), then one POST carries them all and its answer their actions. One model server
 * (e.g. on a GPU) thus serves a whole host with one forward pass per batch.
 *
 * A failure of the whole exchange (timeout, unreachable, HTTP status, not JSON) fails every step of that
 * batch with the same PolicyError; an item the server reports an error for (`server_error`), leaves out or
 * answers with an invalid action (`bad_response`) fails only that device's step.
 */
import { coerceError } from "@farm/errors";
import { parseWireAnswer, readPolicyVersion } from "./answer.ts";
import type { AnswerMeta } from "./http-answer.ts";
import { PolicyError } from "./errors.ts";
import { quotedProtocolError, withoutValues } from "./foreign-body.ts";
import { httpEndpoint, type HttpEndpoint } from "./http-endpoint.ts";
import type { HttpPolicyOptions } from "./http-policy.ts";
import type { EpisodeContext, Policy, PolicyAnswer } from "./types.ts";
import { newEpisodeId, POLICY_PROTOCOL, stringifyWire, toWireEpisodeEnd, toWireRequest, type WireEpisode, type WireMessage } from "./wire.ts";

export interface PolicyBatcherOptions {
  /** How long the first pending message of a batch waits for more. Default 5 ms. */
  windowMs?: number;
  /** A batch is sent at once when it holds this many messages. Default 64. */
  maxBatch?: number;
  /** Told about every batch sent (for metrics: farm_policy_batch_size). */
  onBatch?: (info: { size: number; ok: boolean }) => void;
}

export const DEFAULT_BATCH_WINDOW_MS = 5;
export const DEFAULT_MAX_BATCH = 64;

interface Pending {
  id: string;
  message: WireMessage;
  resolve(a: PolicyAnswer | undefined): void;
  reject(e: unknown): void;
  settled: boolean;
}

/** The answer of a batch, by item id (a Map: ids come from the wire, never index a plain object). */
type BatchResult = { action?: unknown; error?: unknown; policyVersion?: unknown; headerVersion?: string };
type BatchResults = Map<string, BatchResult>;

/** A result's version: its own `policy_version`, else the response's `X-Policy-Version` (PROTOCOL.md, "Policy versions"). */
function parseBatchAnswer(json: unknown, meta: AnswerMeta): BatchResults {
  const results = (json as { results?: unknown } | null)?.results;
  if (!Array.isArray(results)) throw new Error('expected {"results": [{"id": …, "action": {…}} | {"id": …, "error": "…"}, …]}');
  const byId: BatchResults = new Map();
  for (const r of results) {
    if (r === null || typeof r !== "object" || typeof (r as { id?: unknown }).id !== "string") throw new Error("every result needs a string id");
    const { id, action, error, policy_version } = r as { id: string; action?: unknown; error?: unknown; policy_version?: unknown };
    byId.set(id, { action, error, policyVersion: policy_version, ...(meta.version !== undefined ? { headerVersion: meta.version } : {}) });
  }
  return byId;
}

/** One URL's queue: pending messages and the timer of the batch being collected. */
class UrlQueue {
  private pending: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly endpoint: HttpEndpoint,
    private readonly opts: Required<Pick<PolicyBatcherOptions, "windowMs" | "maxBatch">> & PolicyBatcherOptions,
  ) {}

  submit(id: string, message: WireMessage, signal?: AbortSignal): Promise<PolicyAnswer | undefined> {
    if (signal?.aborted) return Promise.reject(new PolicyError("aborted", `${this.endpoint.where}: aborted by the caller before the request`));
    return new Promise((resolve, reject) => {
      const item: Pending = { id, message, resolve, reject, settled: false };
      const onAbort = () => this.settle(item, new PolicyError("aborted", `${this.endpoint.where}: aborted by the caller while waiting for the batch`));
      signal?.addEventListener("abort", onAbort, { once: true });
      item.resolve = (a) => {
        signal?.removeEventListener("abort", onAbort);
        resolve(a);
      };
      item.reject = (e) => {
        signal?.removeEventListener("abort", onAbort);
        reject(e);
      };
      this.pending.push(item);
      if (this.pending.length >= this.opts.maxBatch) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.opts.windowMs);
    });
  }

  /** Rejects the pending (not yet sent) messages of one policy, e.g. when it closes. */
  dropPending(id: string, error: PolicyError): void {
    for (const item of this.pending.filter((p) => p.id === id)) this.settle(item, error);
    this.pending = this.pending.filter((p) => p.id !== id);
  }

  private settle(item: Pending, outcome: PolicyError | { action: PolicyAnswer | undefined }): void {
    if (item.settled) return;
    item.settled = true;
    if (outcome instanceof PolicyError) item.reject(outcome);
    else item.resolve(outcome.action);
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending.filter((p) => !p.settled).slice(0, this.opts.maxBatch);
    this.pending = this.pending.filter((p) => !p.settled).slice(batch.length);
    if (this.pending.length > 0) this.timer = setTimeout(() => this.flush(), this.opts.windowMs);
    if (batch.length === 0) return;
    void this.send(batch);
  }

  private async send(batch: Pending[]): Promise<void> {
    const body = stringifyWire({ protocol: POLICY_PROTOCOL, batch: batch.map((p) => ({ id: p.id, ...p.message })) });
    let results: BatchResults;
    try {
      results = await this.endpoint.request(body, parseBatchAnswer, "batch answer is not valid");
    } catch (e) {
      this.opts.onBatch?.({ size: batch.length, ok: false });
      const err = e instanceof PolicyError ? e : new PolicyError("unreachable", `${this.endpoint.where}: ${coerceError(e).message}`, { retryable: true });
      for (const item of batch) this.settle(item, err);
      return;
    }
    this.opts.onBatch?.({ size: batch.length, ok: true });
    for (const item of batch) this.settle(item, this.itemOutcome(item, results.get(item.id)));
  }

  private itemOutcome(item: Pending, r: BatchResult | undefined): PolicyError | { action: PolicyAnswer | undefined } {
    const where = `${this.endpoint.where} (batch item ${item.id})`;
    if (item.message.type === "episode_end") return { action: undefined };
    if (!r) return new PolicyError("bad_response", `${where}: the batch answer has no result for this item; answer every step item with its id`);
    // The protocol's own error is quoted (short, escaped); an invalid action is named by the rule it breaks, not its values.
    if (r.error !== undefined) return new PolicyError("server_error", `${where}: the server reported: ${typeof r.error === "string" ? quotedProtocolError(r.error) : "an error that is not a string"}`);
    try {
      return { action: parseWireAnswer(r.action, readPolicyVersion(r.policyVersion, "policy_version") ?? r.headerVersion) };
    } catch (e) {
      return new PolicyError("bad_response", `${where}: answer is not a valid action: ${withoutValues(coerceError(e).message)}`);
    }
  }
}

export class PolicyBatcher {
  private readonly queues = new Map<string, UrlQueue>();
  private readonly opts: Required<Pick<PolicyBatcherOptions, "windowMs" | "maxBatch">> & PolicyBatcherOptions;
  private nextId = 0;

  constructor(opts: PolicyBatcherOptions = {}) {
    const windowMs = opts.windowMs ?? DEFAULT_BATCH_WINDOW_MS;
    const maxBatch = opts.maxBatch ?? DEFAULT_MAX_BATCH;
    if (!(Number.isFinite(windowMs) && windowMs >= 0 && windowMs <= 1000)) throw new RangeError(`policy batch window must be 0…1000 ms, got ${windowMs}`);
    if (!(Number.isSafeInteger(maxBatch) && maxBatch >= 1 && maxBatch <= 4096)) throw new RangeError(`policy max batch must be an integer 1…4096, got ${maxBatch}`);
    this.opts = { ...opts, windowMs, maxBatch };
  }

  private queueFor(url: string, opts: HttpPolicyOptions): UrlQueue {
    // Policies with the same URL and transport options share a queue (a worker resolves them all alike).
    const key = JSON.stringify([url, opts.timeoutMs, opts.headers, opts.allowedHosts, opts.maxResponseBytes]);
    let q = this.queues.get(key);
    if (!q) {
      q = new UrlQueue(httpEndpoint(url, { ...opts, maxResponseBytes: opts.maxResponseBytes ?? 16 * 1024 * 1024 }), this.opts);
      this.queues.set(key, q);
    }
    return q;
  }

  /** A policy for one device whose steps travel in this batcher's batches for `url`. */
  policy(url: string, opts: HttpPolicyOptions = {}): Policy {
    const queue = this.queueFor(url, opts);
    const id = `d${(this.nextId++).toString(36)}`;
    const encoding = opts.pixelEncoding ?? "png";
    let context: EpisodeContext | null = null;
    let episode: WireEpisode | null = null;
    let closed = false;
    const { where } = queue.endpoint;
    return {
      name: `http-batch:${queue.endpoint.url.host}${queue.endpoint.url.pathname}`,
      get version() {
        return queue.endpoint.version;
      },
      needsPixels: opts.needsPixels ?? true,
      needsElements: opts.needsElements ?? false,
      async reset(ctx) {
        context = { ...ctx, screen: { ...ctx.screen } };
        episode = { id: newEpisodeId(), seed: ctx.seed, index: ctx.episodeIndex };
      },
      async act(observation, signal) {
        if (closed) throw new PolicyError("closed", `${where}: act() after close()`);
        const a = await queue.submit(id, toWireRequest(observation, context, encoding, episode), signal);
        return a!;
      },
      async endEpisode(end) {
        if (closed) return;
        await queue.submit(id, toWireEpisodeEnd(end, episode));
      },
      async close() {
        closed = true;
        queue.dropPending(id, new PolicyError("closed", `${where}: policy closed while waiting for the batch`));
      },
    };
  }

  /** Ends every exchange in flight (their steps fail as `closed`). */
  close(): void {
    for (const q of this.queues.values()) q.endpoint.close();
    this.queues.clear();
  }
}
