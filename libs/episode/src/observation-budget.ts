/**
 * An episode's byte budget for what it records of its observations: trees (with their element lists), frames and
 * the policy's answers. Recorded observations stay in memory until the episode ends (a tree can be megabytes), so a
 * long episode with big screens is bounded here. Past the budget the episode records no more of them — each one left
 * out is counted (`observations_dropped_{trees,frames,answers}` in the trajectory's counters, beside
 * `observation_bytes` and `observation_budget_exceeded`) — and goes on (`onExceeded: "stop_recording"`, the default),
 * or ends truncated with its own cause (`"end"`: `observation_budget`). The policy still sees every observation;
 * only the record is bounded.
 */
import { trunc, type End } from "./episode-end.ts";
import type { ObservationBudgetSpec } from "./episode-limits.ts";
import type { UiStepRecord } from "./trajectory-types.ts";
import type { UiElement } from "@farm/policy";

export type { ObservationBudgetSpec };

export type ObservationKind = "trees" | "frames" | "answers";

export class ObservationBudget {
  private bytes = 0;
  private readonly dropped: Record<ObservationKind, number> = { trees: 0, frames: 0, answers: 0 };
  private over = false;

  /** `frameBytes`: the recorded frames' bytes so far (encodings finish in the background). */
  constructor(
    private readonly spec: ObservationBudgetSpec | undefined,
    private readonly frameBytes: () => number = () => 0,
  ) {
    if (spec && !(Number.isSafeInteger(spec.maxBytes) && spec.maxBytes > 0)) throw new RangeError(`observation budget must be a positive whole number of bytes, got ${String(spec.maxBytes)}`);
  }

  private used(): number {
    return this.bytes + this.frameBytes();
  }

  /** Whether one more observation of `kind` may be recorded; false counts it as dropped. */
  admit(kind: ObservationKind): boolean {
    if (!this.spec) return true;
    if (!this.over && this.used() >= this.spec.maxBytes) this.over = true;
    if (this.over) this.dropped[kind]++;
    return !this.over;
  }

  /** Counts a recorded tree: its compact JSON and its elements (frames count themselves). */
  addTree(a11y: { tree: string; elements: readonly UiElement[] }): void {
    if (!this.spec) return;
    // The elements' own texts and a fixed cost per element: close to their JSON, without writing it out.
    let elements = 0;
    for (const e of a11y.elements) elements += 160 + e.text.length + e.content_description.length + e.hint_text.length + e.resource_id.length + e.class_name.length + e.package_name.length;
    this.bytes += a11y.tree.length + elements;
  }

  /** A step's answer as recorded: whole while the budget lasts, else without the model's text (`given` empty, counted). */
  answer(ui: UiStepRecord): UiStepRecord {
    if (!this.spec || ui.given === "") return ui;
    if (!this.admit("answers")) return Object.assign({}, ui, { given: "" });
    this.bytes += ui.given.length;
    return ui;
  }

  /** With `onExceeded: "end"`, the episode's end once the budget is spent. */
  end(): End | undefined {
    if (!this.spec || this.spec.onExceeded !== "end") return undefined;
    if (!this.over && this.used() >= this.spec.maxBytes) this.over = true;
    return this.over ? trunc("observation_budget", `recorded observations reached the episode's budget of ${this.spec.maxBytes} bytes`) : undefined;
  }

  /** The trajectory's counters (only with a budget). */
  counters(into: Record<string, number>): void {
    if (!this.spec) return;
    into.observation_bytes = this.used();
    if (this.over) into.observation_budget_exceeded = 1;
    for (const [k, n] of Object.entries(this.dropped)) if (n > 0) into[`observations_dropped_${k}`] = n;
  }

  get exceeded(): boolean {
    return this.over;
  }
}
