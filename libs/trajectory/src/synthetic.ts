/**
 * Realistic synthetic episodes for tests and benchmarks (a 2048-like task): ~100 steps with typical
 * extras and, optionally, small real PNG observation frames. Deterministic for a given seed.
 */
import zlib from "node:zlib";
import { encodeRgbPng } from "@farm/png";
import { seededRandomFromState } from "@farm/seeded-random";
import type { A11yObservation, StepRecord } from "@farm/episode";
import type { UiElement } from "@farm/policy";
import { episodeIdOf } from "./episode-id.ts";
import type { EpisodeRecord } from "./types.ts";

export interface SyntheticEpisodeOptions {
  campaignId?: string;
  episodeIndex?: number;
  attempt?: number;
  taskId?: string;
  steps?: number;
  /** Attach a PNG frame to every step. */
  frames?: boolean;
  /** Side of the square frame in pixels (64 → a few KB of PNG). */
  frameSize?: number;
  startedAt?: Date;
  worker?: string;
  /**
   * An agent episode (a notes-like task): a goal, the screen as a tree on every step and initially, UI
   * actions (every 4th invalid), policy usage extras, an initial frame when `frames`, a status at the end.
   */
  agent?: boolean;
  /** A scored episode (a family with checks, issue 41): parameters, success, the final score's checks; every 5th a score error. */
  scored?: boolean;
}

/** The seeded PRNG (@farm/seeded-random) started from the seed itself as its 32-bit state. */
function rng(seed: number): () => number {
  const r = seededRandomFromState(seed);
  return () => r.next();
}

/** A valid RGB PNG of a noisy 4×4 tile board. */
export function syntheticPng(size: number, seed: number): Buffer {
  const r = rng(seed);
  const tiles = Array.from({ length: 16 }, () => [r() * 255, r() * 255, r() * 255]);
  const rgb = new Uint8Array(size * size * 3);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const tile = tiles[Math.floor((y * 4) / size) * 4 + Math.floor((x * 4) / size)] ?? [0, 0, 0];
      for (let c = 0; c < 3; c++) rgb[(y * size + x) * 3 + c] = Math.min(255, Math.max(0, (tile[c] ?? 0) + (r() - 0.5) * 24));
    }
  }
  // zlib's default level, as these frames have always been compressed.
  return encodeRgbPng(size, size, rgb, { level: zlib.constants.Z_DEFAULT_COMPRESSION });
}

const pngCache = new Map<string, Buffer>();
function cachedPng(size: number, variant: number): Buffer {
  const key = `${size}:${variant}`;
  let png = pngCache.get(key);
  if (!png) pngCache.set(key, (png = syntheticPng(size, variant + 1)));
  return png;
}

export function syntheticEpisode(seed: number, o: SyntheticEpisodeOptions = {}): EpisodeRecord {
  const r = rng(seed);
  const campaignId = o.campaignId ?? "campaign-synthetic";
  const episodeIndex = o.episodeIndex ?? seed;
  const stepCount = o.steps ?? 100;
  const startedAt = o.startedAt ?? new Date(Date.UTC(2026, 10, 22, 3, 0, 0) + seed * 1000);
  const steps: StepRecord[] = [];
  let total = 0;
  let t = 0;
  const board = Array.from({ length: 4 }, () => [0, 0, 0, 0]);
  for (let i = 1; i <= stepCount; i++) {
    t += 40 + Math.floor(r() * 80);
    const reward = r() < 0.3 ? 2 ** (1 + Math.floor(r() * 6)) : 0;
    total += reward;
    board[Math.floor(r() * 4)]![Math.floor(r() * 4)] = 2 ** Math.floor(r() * 8);
    const step: StepRecord = {
      index: i,
      timeOffsetMs: t,
      action: { actionType: r() < 0.5 ? "TOUCH" : "LIFT", touchPosition: [r(), r()] },
      reward,
      extras: [
        { name: "score", dtype: "INT32", shape: [], value: total },
        { name: "board", dtype: "INT32", shape: [4, 4], value: board.map((row) => [...row]) },
        { name: "direction", dtype: "STRING", shape: [], value: ["up", "down", "left", "right"][Math.floor(r() * 4)] },
        { name: "q_values", dtype: "FLOAT", shape: [4], value: [r(), r(), r(), r()] },
        { name: "moved", dtype: "BOOL", shape: [], value: r() < 0.8 },
      ],
    };
    if (o.frames) step.frame = cachedPng(o.frameSize ?? 64, (seed + i) % 8);
    steps.push(step);
  }
  const terminated = r() < 0.7;
  const record: EpisodeRecord = {
    episodeId: episodeIdOf(campaignId, episodeIndex),
    campaignId,
    episodeIndex,
    attempt: o.attempt ?? 1,
    worker: o.worker ?? "worker-synthetic",
    taskDialect: "current",
    taskId: o.taskId ?? "classic_2048",
    taskHash: "sha256:5f1c0ffee",
    deviceSerial: `emulator-${5554 + (seed % 8) * 2}`,
    policyName: "random",
    policyVersion: "1.0.0",
    seed,
    startedAt,
    endedAt: new Date(startedAt.getTime() + t + 500),
    outcome: terminated ? "terminated" : "truncated",
    cause: terminated ? "episode_end" : "step_limit",
    causeDetail: terminated ? "" : `max_episode_steps=${stepCount}`,
    totalReward: total,
    steps,
    counters: { malformed_log_lines: Math.floor(r() * 3) },
  };
  if (o.agent) makeAgentEpisode(record, seed, o);
  if (o.scored) makeScoredEpisode(record, seed);
  return record;
}

const GOALS = ["Create a note titled milk", "Delete the note titled eggs", "Open the settings and turn on dark mode"];

/** A screen of a notes app: a title, a text field, a button and `notes` list rows; the compact tree beside its elements. */
export function syntheticScreen(notes: number): A11yObservation {
  const rows: [string, string, string, number[], number][] = [
    ["android.widget.TextView", "Notes", "", [0, 0, 1080, 160], 0],
    ["android.widget.EditText", "", "com.example.notes:id/title", [40, 200, 1040, 320], 1],
    ["android.widget.Button", "Save", "com.example.notes:id/save", [40, 360, 520, 480], 2],
  ];
  for (let i = 0; i < notes; i++) rows.push(["android.widget.TextView", `note ${i + 1}`, "com.example.notes:id/note", [0, 520 + i * 140, 1080, 660 + i * 140], 3]);
  const elements: UiElement[] = rows.map(([cls, text, id, b, kind], index) => ({
    index, class_name: cls, text, content_description: "", hint_text: kind === 1 ? "Title" : "", resource_id: id,
    package_name: "com.example.notes", bounds: [b[0]!, b[1]!, b[2]!, b[3]!],
    is_clickable: kind >= 1, is_long_clickable: kind === 3, is_editable: kind === 1, is_scrollable: false,
    is_checkable: false, is_checked: false, is_focused: kind === 1, is_enabled: true, is_selected: false,
  }));
  const tree = JSON.stringify({
    v: 1, source: "synthetic", rotation: 0,
    columns: ["id", "depth", "class", "text", "desc", "hint", "resource_id", "package", "left", "top", "right", "bottom", "flags", "children"],
    windows: [{ id: 1, type: 1, layer: 0, title: "Notes", active: true, focused: true, bounds: [0, 0, 1080, 1920],
      nodes: elements.map((e) => [e.index + 1, 1, e.class_name, e.text, "", e.hint_text, e.resource_id, e.package_name, ...e.bounds, e.is_clickable ? 1 : 0, []]) }],
  });
  return { tree, elements };
}

/** Turns a synthetic episode into an agent episode (deterministic for the seed). */
function makeAgentEpisode(e: EpisodeRecord, seed: number, o: SyntheticEpisodeOptions): void {
  e.taskId = o.taskId ?? "notes_create";
  e.policyName = "llm";
  e.goal = GOALS[seed % GOALS.length]!;
  e.a11yEvery = 1;
  e.initialA11y = syntheticScreen(0);
  if (o.frames) e.initialFrame = cachedPng(o.frameSize ?? 64, seed % 8);
  for (const s of e.steps) {
    s.extras = [
      { name: "policy_prompt_tokens", dtype: "INT64", shape: [], value: 900 + s.index * 10 },
      { name: "policy_completion_tokens", dtype: "INT64", shape: [], value: 20 + (s.index % 5) },
      { name: "policy_latency_ms", dtype: "DOUBLE", shape: [], value: 50 + s.index / 4 },
      { name: "policy_attempts", dtype: "INT32", shape: [], value: 1 },
    ];
    s.a11y = syntheticScreen(s.index % 4);
    s.action = { actionType: "REPEAT", touchPosition: [0, 0] };
    if (s.index % 4 === 0) {
      s.ui = { given: `{"action_type":"click","index":${40 + s.index}}`, invalid: `index ${40 + s.index} is out of range (the screen has 4 elements)` };
    } else if (s.index % 2 === 1) {
      s.ui = { given: '{"action_type":"click","index":2}', resolved: { op: "tap", x: 280, y: 420, element: 2 } };
    } else {
      s.ui = { given: '{"action_type":"input_text","text":"milk","index":1}', resolved: { op: "type", element: 1, text: "milk", x: 540, y: 260 } };
    }
  }
  if (e.outcome === "terminated") {
    e.cause = "agent_status";
    e.agentStatus = seed % 5 === 4 ? "infeasible" : "complete";
    const last = e.steps.at(-1);
    if (last) last.ui = { given: `{"action_type":"status","goal_status":"${e.agentStatus}"}`, resolved: { op: "status", goalStatus: e.agentStatus } };
  }
  if (seed % 3 === 0) e.answer = "There are 2 notes";
  e.invalidActions = e.steps.filter((s) => s.ui?.invalid !== undefined).length;
}

/** Adds a task instance's parameters and final score (deterministic for the seed). */
function makeScoredEpisode(e: EpisodeRecord, seed: number): void {
  const state = seed % 2 === 0 ? "on" : "off";
  e.params = { state, level: seed % 7, strict: seed % 3 === 0 };
  if (seed % 5 === 4) {
    e.checks = [{ name: "notes", kind: "sql", passed: false, observed: "", expected: '== "1"', error: "no database at /data/data/com.farm.simapps.todo/databases/todo.db" }];
    e.scoreError = "notes: no database at /data/data/com.farm.simapps.todo/databases/todo.db";
    return;
  }
  const passed = seed % 4 !== 1;
  e.checks = [
    { name: "wifi", kind: "setting", passed, observed: passed ? (state === "on" ? "1" : "0") : "2", expected: `== "${state === "on" ? "1" : "0"}"` },
    { name: "checks[1] answer", kind: "answer", passed: true, observed: "There are 2 notes", expected: 'fuzzy "there are 2 notes"' },
  ];
  e.success = passed ? 1 : 0;
}
