/**
 * Episodes as the viewer shows them, read one at a time from a folder of Avro trajectory files
 * (@farm/trajectory) or from a Parquet data set (DuckDB): a list of episodes, one episode's steps without their
 * screens, and one screen (frame or element list) at a time, so no page holds a campaign's frames at once.
 *
 * Screens are numbered 0..steps: screen 0 is the initial one (what step 1's action was chosen on), screen n the
 * one after step n (what step n + 1 was chosen on); screen `steps` is the final one.
 */
import { stat } from "node:fs/promises";
import { listTrajectoryFiles, openTrajectoryFile, type StoredEpisode } from "@farm/trajectory";
import { coerceError } from "@farm/errors";
import { openDatasetDb, type DatasetDb } from "./dataset-db.ts";

export interface EpisodeListItem {
  id: string;
  campaignId: string;
  episodeIndex: number;
  taskId: string;
  policy: string;
  goal: string | null;
  outcome: string;
  cause: string;
  reward: number;
  /** The task's score (0..1) when the episode has one. */
  success: number | null;
  /** success = 1 when present, else reward > 0 (as the report counts it). */
  succeeded: boolean;
  steps: number;
  startedAt: number;
  endedAt: number;
  invalidActions: number;
}

export interface CheckView {
  name: string;
  kind: string;
  passed: boolean;
  observed: string;
  expected: string;
  error?: string;
}

export interface StepView {
  index: number;
  reward: number;
  timeOffsetMs: number;
  /** The answer as the policy gave it (a model's whole text), when recorded. */
  given: string | null;
  /** The action read from it (compact JSON), or the AndroidEnv touch as JSON. */
  action: string | null;
  /** What the UI action did on the device (op, x, y, element, text, …). */
  resolved: Record<string, unknown> | null;
  invalid: string | null;
  /** An AndroidEnv touch: type and position in [0, 1]. */
  touch: { type: string; x: number; y: number } | null;
  extras: { name: string; value: unknown }[];
}

export interface ScreenAvailability {
  frame: boolean;
  elements: boolean;
}

export interface EpisodeView extends EpisodeListItem {
  causeDetail: string;
  agentStatus: string | null;
  answer: string | null;
  params: unknown;
  checks: CheckView[] | null;
  scoreError: string | null;
  frameEncoding: string | null;
  worker: string;
  device: string;
  stepViews: StepView[];
  /** steps + 1 screens (see the module comment). */
  screens: ScreenAvailability[];
}

export interface ScreenElements {
  elements: unknown[];
  /** The device screen in pixels (from the tree's windows), when known. */
  screen: { width: number; height: number } | null;
  tree: string | null;
}

export interface EpisodeFilter {
  campaign?: string;
  task?: string;
  /** endedAt within [from, to) (ms since the epoch). */
  from?: number;
  to?: number;
  limit?: number;
}

export interface EpisodeSource {
  /** What is shown (the folder). */
  label: string;
  list(filter?: EpisodeFilter): Promise<{ episodes: EpisodeListItem[]; total: number }>;
  episode(id: string): Promise<EpisodeView | undefined>;
  screenImage(id: string, screen: number): Promise<{ bytes: Uint8Array; type: string } | undefined>;
  screenElements(id: string, screen: number): Promise<ScreenElements | undefined>;
  /** The files an episode list came from (Avro sources; for exporting a campaign). */
  files?(filter?: EpisodeFilter): Promise<string[]>;
  close(): void;
}

export const MAX_LIST = 5000;

/** image/png, image/jpeg or image/webp by the bytes' signature. */
export function imageType(b: Uint8Array): string {
  if (b[0] === 0x89 && b[1] === 0x50) return "image/png";
  if (b[0] === 0xff && b[1] === 0xd8) return "image/jpeg";
  if (b[0] === 0x52 && b[1] === 0x49 && b[8] === 0x57 && b[9] === 0x45) return "image/webp";
  return "application/octet-stream";
}

/** The screen size from the compact tree's windows (their largest right and bottom edges). */
export function screenSizeOf(tree: string | null | undefined, elements: unknown[]): { width: number; height: number } | null {
  let w = 0;
  let h = 0;
  if (tree) {
    try {
      const t = JSON.parse(tree) as { windows?: { bounds?: number[] }[] };
      for (const win of t.windows ?? []) {
        const b = win.bounds ?? [];
        w = Math.max(w, Number(b[2]) || 0);
        h = Math.max(h, Number(b[3]) || 0);
      }
    } catch {
      // not a tree we know: fall back to the elements
    }
  }
  if (w <= 0 || h <= 0) {
    for (const e of elements as { bounds?: number[] }[]) {
      w = Math.max(w, Number(e.bounds?.[2]) || 0);
      h = Math.max(h, Number(e.bounds?.[3]) || 0);
    }
  }
  return w > 0 && h > 0 ? { width: w, height: h } : null;
}

function matches(e: EpisodeListItem, f: EpisodeFilter): boolean {
  if (f.campaign !== undefined && e.campaignId !== f.campaign) return false;
  if (f.task !== undefined && e.taskId !== f.task) return false;
  if (f.from !== undefined && e.endedAt < f.from) return false;
  if (f.to !== undefined && e.endedAt >= f.to) return false;
  return true;
}

const limitOf = (f: EpisodeFilter) => Math.max(1, Math.min(MAX_LIST, f.limit ?? 500));

// ---------------------------------------------------------------- Avro folders

type StoredWithScore = StoredEpisode & { success?: number; checks?: CheckView[]; params?: unknown; scoreError?: string };

function listItemOf(e: StoredWithScore): EpisodeListItem {
  const success = typeof e.success === "number" ? e.success : null;
  return {
    id: e.episodeId,
    campaignId: e.campaignId,
    episodeIndex: e.episodeIndex,
    taskId: e.taskId,
    policy: e.policyName,
    goal: e.goal ?? null,
    outcome: e.outcome,
    cause: e.cause,
    reward: e.totalReward,
    success,
    succeeded: success !== null ? success >= 1 : e.totalReward > 0,
    steps: e.steps.length,
    startedAt: e.startedAt.getTime(),
    endedAt: e.endedAt.getTime(),
    invalidActions: e.invalidActions ?? 0,
  };
}

function extraValue(v: unknown): unknown {
  if (typeof v === "bigint") return Number(v);
  if (v instanceof Uint8Array) return `(${v.byteLength} bytes)`;
  if (Array.isArray(v)) return v.map(extraValue);
  return v;
}

/** The viewer's form of a stored episode (no frames, no trees). */
export function episodeViewOf(e: StoredEpisode): EpisodeView {
  const s = e as StoredWithScore;
  const screens: ScreenAvailability[] = [{ frame: !!e.initialFrame, elements: !!e.initialA11y }, ...e.steps.map((st) => ({ frame: !!st.frame, elements: !!st.a11y }))];
  return {
    ...listItemOf(s),
    causeDetail: e.causeDetail,
    agentStatus: e.agentStatus ?? null,
    answer: e.answer ?? null,
    params: s.params ?? null,
    checks: s.checks ?? null,
    scoreError: s.scoreError ?? null,
    frameEncoding: e.frameEncoding ?? null,
    worker: e.worker,
    device: e.deviceSerial,
    stepViews: e.steps.map((st) => {
      const isTouch = !st.ui;
      return {
        index: st.index,
        reward: st.reward,
        timeOffsetMs: st.timeOffsetMs,
        given: st.ui?.given ?? null,
        // As the data set's action_json: the action read from the answer, else the answer when it was not invalid.
        action: st.ui ? (st.ui.action ?? (st.ui.invalid ? null : st.ui.given)) : JSON.stringify({ action_type: st.action.actionType, touch_position: st.action.touchPosition }),
        resolved: (st.ui?.resolved as Record<string, unknown> | undefined) ?? null,
        invalid: st.ui?.invalid ?? null,
        touch: isTouch ? { type: st.action.actionType, x: st.action.touchPosition[0], y: st.action.touchPosition[1] } : null,
        extras: st.extras.map((x) => ({ name: x.name, value: extraValue(x.value) })),
      };
    }),
    screens,
  };
}

interface IndexedFile {
  mtimeMs: number;
  size: number;
  items: EpisodeListItem[];
}

/**
 * Episodes of a folder (or files) of Avro trajectories. The list is an index of summaries (re-read for new or
 * changed files at most every `rescanMs`); an episode is read from its file on demand, a few kept decoded.
 */
export async function openAvroEpisodeSource(paths: readonly string[], opts: { memoryBudgetBytes?: number; rescanMs?: number; cached?: number } = {}): Promise<EpisodeSource> {
  const files = new Map<string, IndexedFile>();
  const fileOf = new Map<string, string>();
  const cache = new Map<string, StoredEpisode>();
  const rescanMs = opts.rescanMs ?? 3000;
  const keep = opts.cached ?? 3;
  let scannedAt = 0;
  let scanning: Promise<void> | undefined;
  const readOpts = opts.memoryBudgetBytes !== undefined ? { memoryBudgetBytes: opts.memoryBudgetBytes } : {};

  async function scan(): Promise<void> {
    const { files: found } = await listTrajectoryFiles(paths);
    const seen = new Set(found);
    for (const f of [...files.keys()]) if (!seen.has(f)) files.delete(f);
    for (const f of found) {
      let st;
      try {
        st = await stat(f);
      } catch {
        continue; // gone between the listing and now
      }
      const known = files.get(f);
      if (known && known.mtimeMs === st.mtimeMs && known.size === st.size) continue;
      const items: EpisodeListItem[] = [];
      try {
        const opened = await openTrajectoryFile(f, readOpts);
        for await (const e of opened.episodes) items.push(listItemOf(e as StoredWithScore));
      } catch (e) {
        // An unreadable (or still growing) file shows nothing now; it is read again when it changes.
        void coerceError(e);
      }
      files.set(f, { mtimeMs: st.mtimeMs, size: st.size, items });
    }
    fileOf.clear();
    for (const [f, x] of files) for (const it of x.items) if (!fileOf.has(it.id)) fileOf.set(it.id, f);
    scannedAt = Date.now();
  }
  const fresh = async () => {
    if (Date.now() - scannedAt < rescanMs) return;
    scanning ??= scan().finally(() => {
      scanning = undefined;
    });
    await scanning;
  };
  const all = () => {
    const out: EpisodeListItem[] = [];
    const ids = new Set<string>();
    for (const x of files.values()) for (const it of x.items) if (!ids.has(it.id)) (ids.add(it.id), out.push(it));
    return out;
  };
  async function load(id: string): Promise<StoredEpisode | undefined> {
    const hit = cache.get(id);
    if (hit) {
      cache.delete(id);
      cache.set(id, hit);
      return hit;
    }
    let file = fileOf.get(id);
    if (!file) {
      await fresh(); // a file written since the last scan (scans stay throttled: unknown ids cannot force them)
      file = fileOf.get(id);
      if (!file) return undefined;
    }
    const opened = await openTrajectoryFile(file, readOpts);
    let found: StoredEpisode | undefined;
    for await (const e of opened.episodes) if (!found && e.episodeId === id) found = e;
    if (!found) return undefined;
    cache.set(id, found);
    while (cache.size > keep) cache.delete(cache.keys().next().value!);
    return found;
  }
  const screenOf = (e: StoredEpisode, n: number) => {
    if (!Number.isInteger(n) || n < 0 || n > e.steps.length) return undefined;
    return n === 0 ? { frame: e.initialFrame, a11y: e.initialA11y } : { frame: e.steps[n - 1]!.frame, a11y: e.steps[n - 1]!.a11y };
  };
  return {
    label: paths.join(", "),
    async list(filter = {}) {
      await fresh();
      const hits = all().filter((e) => matches(e, filter)).sort((a, b) => b.endedAt - a.endedAt || a.id.localeCompare(b.id));
      return { episodes: hits.slice(0, limitOf(filter)), total: hits.length };
    },
    async episode(id) {
      const e = await load(id);
      return e ? episodeViewOf(e) : undefined;
    },
    async screenImage(id, n) {
      const e = await load(id);
      const s = e && screenOf(e, n);
      if (!s?.frame) return undefined;
      return { bytes: s.frame, type: imageType(s.frame) };
    },
    async screenElements(id, n) {
      const e = await load(id);
      const s = e && screenOf(e, n);
      if (!s?.a11y) return undefined;
      return { elements: s.a11y.elements, screen: screenSizeOf(s.a11y.tree, s.a11y.elements), tree: s.a11y.tree };
    },
    async files(filter = {}) {
      await fresh();
      const out = new Set<string>();
      for (const [f, x] of files) if (x.items.some((e) => matches(e, filter))) out.add(f);
      return [...out].sort();
    },
    close() {
      cache.clear();
      files.clear();
    },
  };
}

// ---------------------------------------------------------------- Parquet data sets

const parseJson = (v: unknown): unknown => {
  if (typeof v !== "string") return v ?? null;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return v;
  }
};
const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const num = (v: unknown): number => (typeof v === "number" ? v : typeof v === "bigint" ? Number(v) : Number(v ?? 0));

/** Episodes of a Parquet data set (the `steps` layout), each screen read by its own query. */
export async function openDatasetEpisodeSource(dir: string): Promise<EpisodeSource> {
  const db: DatasetDb = await openDatasetDb(dir);
  if ((db.manifest.layout ?? "steps") !== "steps") {
    db.close();
    throw new Error(`${dir}: the viewer reads data sets of the steps layout; export with --layout steps (this one is ${db.manifest.layout})`);
  }
  const ecols = await db.columns("episodes");
  const scols = await db.columns("steps");
  const opt = (c: string, as = c) => (ecols.has(c) ? `${c} AS ${as}` : `NULL AS ${as}`);
  const listCols = [
    "episode_id",
    "campaign_id",
    "episode_index",
    "task_id",
    "policy_name",
    "goal",
    "outcome",
    "cause",
    "episode_return",
    "step_count",
    "epoch_ms(started_at) AS started_ms",
    "epoch_ms(ended_at) AS ended_ms",
    "invalid_actions",
    opt("success"),
  ].join(", ");
  const itemOf = (r: Record<string, unknown>): EpisodeListItem => {
    const success = r.success === null || r.success === undefined ? null : num(r.success);
    const reward = num(r.episode_return);
    return {
      id: String(r.episode_id),
      campaignId: String(r.campaign_id),
      episodeIndex: num(r.episode_index),
      taskId: String(r.task_id),
      policy: String(r.policy_name),
      goal: str(r.goal),
      outcome: String(r.outcome),
      cause: String(r.cause),
      reward,
      success,
      succeeded: success !== null ? success >= 1 : reward > 0,
      steps: num(r.step_count),
      startedAt: num(r.started_ms),
      endedAt: num(r.ended_ms),
      invalidActions: num(r.invalid_actions),
    };
  };
  const extraCols = [...scols].filter((c) => c.startsWith("extra_"));
  const firstOf = (...names: string[]) => names.find((n) => ecols.has(n));
  const checksCol = firstOf("checks", "checks_json");
  const paramsCol = firstOf("params", "params_json");
  const scoreErrorCol = firstOf("score_error");
  return {
    label: dir,
    async list(filter = {}) {
      const where: string[] = [];
      const values: (string | number)[] = [];
      if (filter.campaign !== undefined) (where.push("campaign_id = ?"), values.push(filter.campaign));
      if (filter.task !== undefined) (where.push("task_id = ?"), values.push(filter.task));
      if (filter.from !== undefined) (where.push("epoch_ms(ended_at) >= ?"), values.push(filter.from));
      if (filter.to !== undefined) (where.push("epoch_ms(ended_at) < ?"), values.push(filter.to));
      const w = where.length ? ` WHERE ${where.join(" AND ")}` : "";
      const total = num((await db.rows(`SELECT count(*) AS n FROM episodes${w}`, values))[0]?.n);
      const rows = await db.rows(`SELECT ${listCols} FROM episodes${w} ORDER BY ended_at DESC, episode_id LIMIT ${limitOf(filter)}`, values);
      return { episodes: rows.map(itemOf), total };
    },
    async episode(id) {
      const extraCheck = [checksCol, paramsCol, scoreErrorCol].filter(Boolean).map((c) => `, ${c}`).join("");
      const [e] = await db.rows(
        `SELECT ${listCols}, cause_detail, agent_status, answer, worker, device_serial, (final_screenshot IS NOT NULL) AS final_frame, (final_elements IS NOT NULL) AS final_elements_present${extraCheck} FROM episodes WHERE episode_id = ? LIMIT 1`,
        [id],
      );
      if (!e) return undefined;
      const steps = await db.rows(
        `SELECT step_index, reward, time_offset_ms, action_type, touch_position, action_json, action_resolved, action_invalid, (screenshot IS NOT NULL) AS has_frame, (elements IS NOT NULL) AS has_elements${extraCols.map((c) => `, ${c}`).join("")} FROM steps WHERE episode_id = ? ORDER BY step_index`,
        [id],
      );
      const screens: ScreenAvailability[] = steps.map((s) => ({ frame: s.has_frame === true, elements: s.has_elements === true }));
      screens.push({ frame: e.final_frame === true, elements: e.final_elements_present === true });
      return {
        ...itemOf(e),
        causeDetail: String(e.cause_detail ?? ""),
        agentStatus: str(e.agent_status),
        answer: str(e.answer),
        params: paramsCol ? parseJson(e[paramsCol]) : null,
        checks: checksCol ? (parseJson(e[checksCol]) as CheckView[] | null) : null,
        scoreError: scoreErrorCol ? str(e[scoreErrorCol]) : null,
        frameEncoding: null,
        worker: String(e.worker ?? ""),
        device: String(e.device_serial ?? ""),
        stepViews: steps.map((s) => {
          const resolved = parseJson(s.action_resolved) as Record<string, unknown> | null;
          const invalid = str(s.action_invalid);
          const isUi = resolved !== null || invalid !== null || !/^\{"action_type":"(TOUCH|LIFT|REPEAT)"/.test(String(s.action_json ?? ""));
          const pos = (s.touch_position as number[] | null) ?? [0, 0];
          return {
            index: num(s.step_index),
            reward: num(s.reward),
            timeOffsetMs: num(s.time_offset_ms),
            given: invalid !== null ? str(s.action_json) : null,
            action: invalid !== null ? null : str(s.action_json),
            resolved,
            invalid,
            touch: isUi ? null : { type: String(s.action_type), x: num(pos[0]), y: num(pos[1]) },
            extras: extraCols.filter((c) => s[c] !== null && s[c] !== undefined && !(Array.isArray(s[c]) && (s[c] as unknown[]).length === 0)).map((c) => ({ name: c.slice("extra_".length), value: s[c] })),
          };
        }),
        screens,
      };
    },
    async screenImage(id, n) {
      if (!Number.isInteger(n) || n < 0) return undefined;
      const [r] = await db.raw(
        `SELECT screenshot.bytes AS b FROM steps WHERE episode_id = ? AND step_index = ? UNION ALL SELECT final_screenshot.bytes AS b FROM episodes WHERE episode_id = ? AND step_count = ? LIMIT 1`,
        [id, n + 1, id, n],
      );
      const b = r?.b;
      if (!(b instanceof Uint8Array)) return undefined;
      return { bytes: b, type: imageType(b) };
    },
    async screenElements(id, n) {
      if (!Number.isInteger(n) || n < 0) return undefined;
      const [r] = await db.rows(
        `SELECT elements AS e, a11y_tree AS t FROM steps WHERE episode_id = ? AND step_index = ? UNION ALL SELECT final_elements AS e, final_a11y_tree AS t FROM episodes WHERE episode_id = ? AND step_count = ? LIMIT 1`,
        [id, n + 1, id, n],
      );
      if (!r || r.e === null || r.e === undefined) return undefined;
      const elements = (parseJson(r.e) as unknown[]) ?? [];
      const tree = str(r.t);
      return { elements, screen: screenSizeOf(tree, elements), tree };
    },
    close() {
      db.close();
    },
  };
}

/** A Parquet data set (a folder with manifest.json) or Avro files and folders. */
export async function openEpisodeSource(paths: readonly string[], opts: { memoryBudgetBytes?: number } = {}): Promise<EpisodeSource> {
  if (paths.length === 1) {
    try {
      await stat(`${paths[0]}/manifest.json`);
      return await openDatasetEpisodeSource(paths[0]!);
    } catch (e) {
      if ((e as { code?: string }).code !== "ENOENT") throw e;
    }
  }
  return openAvroEpisodeSource(paths, opts);
}
