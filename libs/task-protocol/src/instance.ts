/**
 * `createRemoteTaskInstance`: outside task code (an AndroidWorld-style `TaskEval` class behind a task server) as
 * the episode's `TaskInstance`. The farm always opens the connections (README "Exchanges"): it starts a session
 * (the initialize phase), carries out each device call the task code makes on the episode's device and posts
 * the `AdbResponse` back, until the phase's result; later the score phase the same way; close() ends the session.
 * Everything is bounded: each exchange, each device call, each phase (the family's `timeout_sec`), the number of
 * device calls per phase, and every answer's size and shape.
 */
import http from "node:http";
import https from "node:https";
import { coerceError, errnoCode } from "@farm/errors";
import type { StepResult, StepStatus } from "@farm/adb";
import type { CheckResult, DeviceCalls, InstanceKey, TaskInstance, TaskScore } from "@farm/scoring";
import type { ParamValue, TaskParams, TaskServerRef } from "@farm/task";
import { terminalSafe } from "@farm/terminal-text";
import { adbRequestSchema, toAdbResponseJson, toTypedRequest, type DecodeLimits } from "./adb-json.ts";
import { checkDeviceCall } from "./allow.ts";
import { DeviceCallRefusedError, TaskCodeError, TaskProtocolError, type TaskProtocolErrorCode } from "./errors.ts";
import { taskServerHostGuard, redactUrl, type TaskServerHostGuard } from "./host-guard.ts";
import { exchange, StaleConnectionError, type Exchange } from "./http.ts";
import { answerSchema, firstIssue, ID, initializeResultSchema, scoreResultSchema, type Answer, type Phase } from "./wire.ts";

export const TASK_PROTOCOL_VERSION = 1;

/** What an instance reports, for metrics (bounded labels: phase, command = the request's oneof member, status, outcome) and one log line per phase. */
export type TaskProtocolEvent =
  | { kind: "device_call"; phase: Phase; command: string; status: StepStatus; durationMs: number }
  | { kind: "refused"; phase: Phase; command: string; reason: string }
  | { kind: "phase"; phase: Phase; outcome: "ok" | TaskProtocolErrorCode; durationMs: number; calls: number; message?: string };

export interface RemoteTaskOptions {
  /** Task server hosts besides loopback (names, `*.suffix`, addresses, CIDR ranges, `*`): the worker's config. */
  allowedHosts?: readonly string[];
  /** The only host folder `install_apk` / `generic install` may read an APK from (the family's task folder); none: blobs only. */
  taskDir?: string;
  /** One HTTP exchange: request, task code time until its next device call or result, answer. Default 30 000 ms. */
  exchangeTimeoutMs?: number;
  /** One device call's deadline (shortens a request's own `timeout_sec`). Default 30 000 ms. */
  callTimeoutMs?: number;
  /** A whole phase; default the ref's `timeoutSec`. */
  phaseTimeoutMs?: number;
  /** Device calls one phase may make. Default 500. */
  maxCallsPerPhase?: number;
  /** An answer without file content. Default 1 MiB. */
  maxAnswerBytes?: number;
  /** Decoded bytes of one push / install blob in an answer, or of one pulled file sent to the task server. Default 16 MiB. */
  maxContentBytes?: number;
  /** Told of every device call, refusal and phase end (never throws into the instance). */
  onEvent?: (e: TaskProtocolEvent) => void;
  /** A kept-alive agent to share (one per worker); default: one shared by this module's instances. */
  agent?: http.Agent;
}

const MIB = 1024 * 1024;
const CLASS_NAME = /^[A-Za-z_][A-Za-z0-9_.]{0,127}$/;
/** How long an idle kept-alive connection stays open: below common servers' idle limits (and ours: 60 s). */
const KEEP_ALIVE_IDLE_MS = 2000;
const sharedAgents = {
  http: new http.Agent({ keepAlive: true, timeout: KEEP_ALIVE_IDLE_MS }),
  https: new https.Agent({ keepAlive: true, timeout: KEEP_ALIVE_IDLE_MS }),
};

const snippet = (text: string, n = 160): string => terminalSafe(text.length > n ? `${text.slice(0, n)}…` : text);
const cut = (text: string, n = 1024): string => (text.length > n ? `${text.slice(0, n - 1)}…` : text);

type Stop = "timeout" | "aborted" | "closed";

interface Settings {
  base: URL;
  where: string;
  guard: TaskServerHostGuard;
  agent: http.Agent;
  exchangeMs: number;
  callMs: number;
  phaseMs: number;
  maxCalls: number;
  maxAnswerBytes: number;
  limits: DecodeLimits;
}

function settingsFor(ref: TaskServerRef, opts: RemoteTaskOptions): Settings {
  const where0 = `task server ${redactUrl(String(ref?.url ?? ""))} ${terminalSafe(String(ref?.className ?? "").slice(0, 128))}`;
  const bad = (m: string) => new TaskProtocolError("bad_ref", `${where0}: ${m}`);
  let base: URL;
  try {
    base = new URL(ref.url);
  } catch {
    throw bad("url is not a URL; use e.g. http://127.0.0.1:8765");
  }
  if (base.protocol !== "http:" && base.protocol !== "https:") throw bad("url must be http:// or https://");
  if (!base.pathname.endsWith("/")) base.pathname += "/";
  base.search = "";
  base.hash = "";
  if (!CLASS_NAME.test(ref.className)) throw bad("class must be 1-128 of [A-Za-z0-9_.], not starting with a digit");
  const posMs = (name: string, v: number | undefined, dflt: number): number => {
    const x = v ?? dflt;
    if (!(Number.isFinite(x) && x > 0 && x <= 2 ** 31 - 1)) throw bad(`${name} must be a positive number of ms up to 2^31-1, got ${x}`);
    return x;
  };
  const phaseMs = posMs("timeout_sec", opts.phaseTimeoutMs ?? ref.timeoutSec * 1000, 60_000);
  const guard = taskServerHostGuard(opts.allowedHosts ?? [], where0);
  guard.checkHost(base.hostname);
  const maxContentBytes = posMs("maxContentBytes", opts.maxContentBytes, 16 * MIB);
  return {
    base,
    where: where0,
    guard,
    agent: opts.agent ?? (base.protocol === "https:" ? sharedAgents.https : sharedAgents.http),
    exchangeMs: posMs("exchangeTimeoutMs", opts.exchangeTimeoutMs, 30_000),
    callMs: posMs("callTimeoutMs", opts.callTimeoutMs, 30_000),
    phaseMs,
    maxCalls: Math.floor(posMs("maxCallsPerPhase", opts.maxCallsPerPhase, 500)),
    maxAnswerBytes: posMs("maxAnswerBytes", opts.maxAnswerBytes, MIB),
    limits: { maxContentBytes, maxStringChars: 256 * 1024, maxRepeated: 4096 },
  };
}

/** JSON values a task server may give as parameters, as the farm's scalar `TaskParams` (objects and lists as JSON text; texts cut at 4096 characters). */
function toParams(p: Record<string, unknown> | undefined): TaskParams {
  const out: Record<string, ParamValue> = Object.create(null);
  for (const [k, v] of Object.entries(p ?? {})) {
    out[k] = typeof v === "string" ? cut(v, 4096) : typeof v === "number" || typeof v === "boolean" ? v : cut(JSON.stringify(v), 4096);
  }
  return out;
}

/**
 * The episode's instance of the task server's class. Never throws: a bad `ref` or a host off the allow-list makes
 * `initialize` reject (and `score` answer an error) with a TaskProtocolError saying why.
 */
export function createRemoteTaskInstance(ref: TaskServerRef, key: InstanceKey, opts: RemoteTaskOptions = {}): TaskInstance {
  let s: Settings | undefined;
  let refError: TaskProtocolError | undefined;
  try {
    s = settingsFor(ref, opts);
  } catch (e) {
    refError = e instanceof TaskProtocolError ? e : new TaskProtocolError("bad_ref", `task server: ${coerceError(e).message}`);
  }
  const where = s?.where ?? "task server";
  const emit = (e: TaskProtocolEvent) => {
    try {
      opts.onEvent?.(e);
    } catch {
      // a listener's trouble is not the episode's
    }
  };

  let state: "new" | "initializing" | "ready" | "scoring" | "failed" | "closed" = "new";
  let failure: TaskProtocolError | undefined;
  let session: string | undefined;
  const running = new Set<(why: Stop) => void>();

  /** One exchange within the phase: bounded by its own deadline and the phase's stop. */
  async function send(st: Settings, phaseStop: AbortSignal, method: "POST" | "DELETE", rel: string, body: unknown, maxBytes: number): Promise<Exchange> {
    const url = new URL(rel, st.base);
    const text = body === undefined ? undefined : JSON.stringify(body);
    for (let attempt = 0; ; attempt++) {
      const ac = new AbortController();
      const timer = setTimeout(() => ac.abort("timeout"), st.exchangeMs);
      const onStop = () => ac.abort(phaseStop.reason);
      phaseStop.addEventListener("abort", onStop, { once: true });
      if (phaseStop.aborted) ac.abort(phaseStop.reason);
      try {
        return await exchange(method, url, text, { agent: st.agent, signal: ac.signal, maxBytes, lookup: st.guard.lookup });
      } catch (e) {
        if (e instanceof StaleConnectionError && attempt === 0 && !ac.signal.aborted) continue;
        const why = ac.signal.aborted ? (ac.signal.reason as Stop | "timeout") : undefined;
        if (why === "timeout") throw new TaskProtocolError("timeout", `${where}: no answer to ${method} ${url.pathname} within ${phaseStop.aborted ? "the phase's deadline" : `${st.exchangeMs} ms`}`, { cause: e });
        if (why === "aborted") throw new TaskProtocolError("aborted", `${where}: aborted by the caller`, { cause: e });
        if (why === "closed") throw new TaskProtocolError("closed", `${where}: instance closed`, { cause: e });
        if (e instanceof TaskProtocolError) throw e;
        const err = coerceError(e);
        throw new TaskProtocolError("unreachable", `${where}: ${method} ${url.pathname} failed: ${errnoCode(err) ?? ""} ${snippet(err.message, 200)}`.replace(/  +/g, " "), { cause: e });
      } finally {
        clearTimeout(timer);
        phaseStop.removeEventListener("abort", onStop);
      }
    }
  }

  /** The exchange's answer, checked: a 2xx JSON body of the protocol's shape. */
  function readAnswer(st: Settings, ex: Exchange, phase: Phase): Answer {
    if (ex.tooLarge) throw new TaskProtocolError("bad_answer", `${where}: ${phase} answer of ${ex.size} bytes exceeds the limit of ${st.maxAnswerBytes} bytes (file content: ${st.limits.maxContentBytes} bytes)`);
    let body: unknown;
    try {
      body = JSON.parse(ex.text);
    } catch {
      body = undefined;
    }
    if (ex.status < 200 || ex.status > 299) {
      const msg = (body as { error?: { message?: unknown } } | undefined)?.error?.message;
      throw new TaskProtocolError("http_status", `${where}: HTTP ${ex.status}${typeof msg === "string" ? `: ${snippet(msg, 300)}` : ex.text ? `: ${snippet(ex.text)}` : ""}`, {
        retryable: ex.status === 408 || ex.status === 429 || ex.status >= 500,
      });
    }
    if (body === undefined) throw new TaskProtocolError("bad_answer", `${where}: ${phase} answer is not JSON: ${snippet(ex.text || "(empty)")}`);
    const a = answerSchema.safeParse(body);
    if (!a.success) throw new TaskProtocolError("bad_answer", `${where}: ${phase} answer: ${snippet(firstIssue(a.error, "answer"), 300)}`);
    if (a.data.session !== undefined && session !== undefined && a.data.session !== session) throw new TaskProtocolError("bad_answer", `${where}: ${phase} answer names session ${a.data.session}, not ${session}`);
    if (a.data.phase !== undefined && a.data.phase !== phase) throw new TaskProtocolError("bad_answer", `${where}: answer is for phase ${a.data.phase}, not ${phase}`);
    return a.data;
  }

  /** Runs one phase: the first exchange, then device calls until a result (returned) or an error (thrown). */
  async function runPhase(phase: "initialize" | "score", first: { rel: string; body: unknown }, device: DeviceCalls, signal: AbortSignal): Promise<unknown> {
    const st = s!;
    const t0 = performance.now();
    const deadline = t0 + st.phaseMs;
    const stop = new AbortController();
    const end = (why: Stop) => stop.signal.aborted || stop.abort(why);
    const timer = setTimeout(() => end("timeout"), st.phaseMs);
    const onCaller = () => end("aborted");
    signal.addEventListener("abort", onCaller, { once: true });
    if (signal.aborted) end("aborted");
    running.add(end);
    let calls = 0;
    const stopped = (): TaskProtocolError => {
      const why = stop.signal.reason as Stop;
      if (why === "aborted") return new TaskProtocolError("aborted", `${where}: ${phase} aborted by the caller`);
      if (why === "closed") return new TaskProtocolError("closed", `${where}: instance closed during ${phase}`);
      return new TaskProtocolError("timeout", `${where}: ${phase} did not finish within ${st.phaseMs} ms (${calls} device calls)`);
    };
    /** `work`, or the phase's stop as an error, whichever comes first. */
    const orStop = <T>(work: Promise<T>): Promise<T> =>
      stop.signal.aborted
        ? Promise.reject(stopped())
        : new Promise<T>((resolve, reject) => {
            const onAbort = () => reject(stopped());
            stop.signal.addEventListener("abort", onAbort, { once: true });
            work.then(resolve, reject).finally(() => stop.signal.removeEventListener("abort", onAbort));
          });
    // Read up to what a push of the largest content takes (base64); what is not a push or blob must then fit maxAnswerBytes.
    const readLimit = Math.ceil((st.limits.maxContentBytes * 4) / 3) + st.maxAnswerBytes;
    try {
      let ex = await orStop(send(st, stop.signal, "POST", first.rel, first.body, readLimit));
      for (;;) {
        const a = readAnswer(st, ex, phase);
        if (session === undefined) {
          if (a.session === undefined) throw new TaskProtocolError("bad_answer", `${where}: the answer that starts a session must name it (session)`);
          session = a.session;
        }
        if (a.error) throw new TaskCodeError(`${where}: ${phase}: ${a.error.type ? `${snippet(a.error.type, 80)}: ` : ""}${snippet(a.error.message, 500)}`, a.error.type ?? "Error");
        if (a.device_call === undefined) {
          // A push or blob answer may be large; any other answer must fit the plain limit.
          if (ex.size > st.maxAnswerBytes) throw new TaskProtocolError("bad_answer", `${where}: ${phase} result of ${ex.size} bytes exceeds the limit of ${st.maxAnswerBytes} bytes`);
          emit({ kind: "phase", phase, outcome: "ok", durationMs: performance.now() - t0, calls });
          return a.result;
        }
        calls++;
        const call = a.device_call;
        if (calls > st.maxCalls) throw new TaskProtocolError("too_many_calls", `${where}: ${phase} made more than ${st.maxCalls} device calls`);
        const parsed = adbRequestSchema(st.limits).safeParse(call.request);
        if (!parsed.success) throw new TaskProtocolError("bad_answer", `${where}: ${phase}: device call #${calls} (${call.id}): ${snippet(firstIssue(parsed.error, "request"), 300)}`);
        const decoded = toTypedRequest(parsed.data);
        const member = decoded.member;
        if (ex.size > st.maxAnswerBytes && member !== "push" && member !== "install_apk") {
          throw new TaskProtocolError("bad_answer", `${where}: ${phase}: device call #${calls} (${member}) of ${ex.size} bytes exceeds the limit of ${st.maxAnswerBytes} bytes (only push and install_apk carry file content)`);
        }
        const verdict = checkDeviceCall(decoded.request, opts.taskDir === undefined ? {} : { taskDir: opts.taskDir });
        if (!verdict.ok) {
          emit({ kind: "refused", phase, command: member, reason: verdict.reason });
          throw new DeviceCallRefusedError(`${where}: ${phase}: device call #${calls} refused: ${verdict.reason}`, member);
        }
        const c0 = performance.now();
        let result: StepResult;
        if (decoded.unsupported) result = { status: "failed_precondition", message: decoded.unsupported, output: "", durationMs: 0 };
        else {
          const left = Math.max(1, Math.floor(deadline - performance.now()));
          result = await orStop(device.execute(verdict.request, { timeoutMs: Math.min(st.callMs, left) }));
        }
        if (result.data?.kind === "pull" && result.data.content.byteLength > st.limits.maxContentBytes) {
          result = { status: "internal_error", message: `pulled file is ${result.data.content.byteLength} bytes, more than the task protocol's ${st.limits.maxContentBytes}`, output: "", durationMs: result.durationMs };
        }
        emit({ kind: "device_call", phase, command: member, status: result.status, durationMs: performance.now() - c0 });
        const response = toAdbResponseJson(member, result, decoded.packagesFilter === undefined ? {} : { packagesFilter: decoded.packagesFilter });
        ex = await orStop(send(st, stop.signal, "POST", `v1/sessions/${session}/calls/${call.id}`, { response }, readLimit));
      }
    } catch (e) {
      const err = e instanceof TaskProtocolError ? e : stop.signal.aborted ? stopped() : new TaskProtocolError("unreachable", `${where}: ${phase}: ${snippet(coerceError(e).message, 300)}`, { cause: e });
      emit({ kind: "phase", phase, outcome: err.code, durationMs: performance.now() - t0, calls, message: err.message });
      throw err;
    } finally {
      clearTimeout(timer);
      signal.removeEventListener("abort", onCaller);
      running.delete(end);
    }
  }

  /** Best effort, bounded: the task server forgets the session (its task code thread is told to stop). */
  async function endSession(): Promise<void> {
    if (!s || session === undefined) return;
    const sid = session;
    session = undefined;
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort("timeout"), Math.min(2000, s.exchangeMs));
    try {
      await exchange("DELETE", new URL(`v1/sessions/${sid}`, s.base), undefined, { agent: s.agent, signal: ac.signal, maxBytes: 64 * 1024, lookup: s.guard.lookup });
    } catch {
      // the session expires on the server by itself
    } finally {
      clearTimeout(timer);
    }
  }

  const fail = async (e: TaskProtocolError): Promise<TaskProtocolError> => {
    if (state !== "closed") state = "failed";
    failure ??= e;
    await endSession();
    return e;
  };

  return {
    everySteps: 0,

    async initialize(device, signal) {
      if (refError) throw refError;
      if (state !== "new") throw new TaskProtocolError("state", `${where}: initialize called ${state === "closed" ? "after close()" : "twice"}`);
      state = "initializing";
      const episode = { campaign: key.campaignId ?? "", index: key.index, seed: key.seed };
      const body: Record<string, unknown> = { protocol: TASK_PROTOCOL_VERSION, class: ref.className, episode };
      if (key.fixedParams && Object.keys(key.fixedParams).length > 0) body.params = { ...key.fixedParams };
      if (key.goal !== undefined) body.goal = key.goal;
      try {
        const raw = await runPhase("initialize", { rel: "v1/sessions", body }, device, signal);
        const r = initializeResultSchema.safeParse(raw);
        if (!r.success) throw new TaskProtocolError("bad_answer", `${where}: initialize ${snippet(firstIssue(r.error, "result"), 300)}`);
        if (state !== "initializing") throw new TaskProtocolError("closed", `${where}: instance closed during initialize`);
        state = "ready";
        return { goal: key.goal ?? r.data.goal, params: toParams(r.data.params) };
      } catch (e) {
        throw await fail(e instanceof TaskProtocolError ? e : new TaskProtocolError("unreachable", `${where}: ${snippet(coerceError(e).message, 300)}`));
      }
    },

    async score(device, ctx, signal): Promise<TaskScore> {
      const errorScore = (message: string): TaskScore => ({ reward: 0, checks: [], error: message });
      if (refError) return errorScore(refError.message);
      if (state === "failed") return errorScore(`${where}: not scored: the session failed earlier (${failure?.message ?? "unknown"})`);
      if (state !== "ready") return errorScore(`${where}: score called ${state === "new" || state === "initializing" ? "before initialize finished" : state === "scoring" ? "while another score runs" : "after close()"}`);
      if (session === undefined || !ID.test(session)) return errorScore(`${where}: no session`);
      state = "scoring";
      try {
        const raw = await runPhase("score", { rel: `v1/sessions/${session}/score`, body: { answer: ctx.answer ?? null, final: ctx.final } }, device, signal);
        const r = scoreResultSchema.safeParse(raw);
        if (!r.success) throw new TaskProtocolError("bad_answer", `${where}: score ${snippet(firstIssue(r.error, "result"), 300)}`);
        if (state !== "scoring") throw new TaskProtocolError("closed", `${where}: instance closed during score`);
        state = "ready";
        const v = r.data;
        const checks: CheckResult[] = v.checks
          ? v.checks.map((c) => ({ name: terminalSafe(c.name), kind: "remote", passed: c.passed, observed: cut(c.observed ?? ""), expected: cut(c.expected ?? "") }))
          : [
              {
                name: `${ref.className}.is_successful`,
                kind: "remote",
                passed: v.success >= 1,
                observed: cut(`${v.success}${v.details === undefined ? "" : ` ${JSON.stringify(v.details)}`}`),
                expected: "1",
              },
            ];
        return { success: v.success, reward: v.reward ?? v.success, checks };
      } catch (e) {
        const err = await fail(e instanceof TaskProtocolError ? e : new TaskProtocolError("unreachable", `${where}: ${snippet(coerceError(e).message, 300)}`));
        return errorScore(err.message);
      }
    },

    async close() {
      if (state === "closed") return;
      state = "closed";
      for (const end of [...running]) end("closed");
      await endSession();
    },
  };
}
