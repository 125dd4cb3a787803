/**
 * The observations' pixels and the trajectory's frames of one episode. The screen is captured only when
 * the policy looks at pixels or the step's frame is recorded; the policy gets raw RGB (no encode/decode
 * round trip); a recorded frame is encoded off the event loop (the device's frame threads, else libuv's
 * pool) while the episode goes on, and the encodings are collected at its end.
 */
import type { Device, StepResult } from "@farm/adb";
import { FrameRecorder, formatFrameSpec, rgbaToRgb, type FrameSpec } from "@farm/frames";
import type { Pixels } from "@farm/policy";
import type { StepRecord } from "./trajectory-types.ts";

export class EpisodeFrames {
  private readonly recorder: FrameRecorder;

  constructor(
    private readonly device: Device,
    readonly spec: FrameSpec,
    private readonly timeoutMs: number,
  ) {
    this.recorder = new FrameRecorder(spec);
  }

  /** The text of the spec for the trajectory (`png`, `jpeg:85`, …). */
  get encoding(): string {
    return formatFrameSpec(this.spec);
  }

  /**
   * Takes the screen for step `key` when `pixels` (for the policy) or `record` (for the trajectory) asks for it.
   * Resolves once the screen is captured: the encoding of a recorded frame goes on in the background.
   */
  async take(key: number, pixels: boolean, record: boolean): Promise<{ pixels?: Pixels } | { fail: StepResult }> {
    if (!pixels && !record) return {};
    if (this.device.frame) {
      const f = await this.device.frame({ raw: pixels, rawFormat: "rgb", ...(record ? { encode: this.spec } : {}), timeoutMs: this.timeoutMs });
      if (!("width" in f)) return { fail: f };
      if (record && f.encoded) await this.recorder.track(key, f.encoded);
      // A device that hands back RGBA whatever was asked (e.g. a test double) is converted here.
      const rgb = f.rgb ?? (f.rgba ? rgbaToRgb(f.rgba, f.width, f.height) : undefined);
      return pixels && rgb ? { pixels: { width: f.width, height: f.height, rgb } } : {};
    }
    const shot = await this.device.screenshot({ timeoutMs: this.timeoutMs });
    if (!("rgba" in shot)) return { fail: shot };
    if (record) await this.recorder.add(key, { width: shot.width, height: shot.height, channels: 4, data: shot.rgba });
    return pixels ? { pixels: { width: shot.width, height: shot.height, rgb: rgbaToRgb(shot.rgba, shot.width, shot.height) } } : {};
  }

  /**
   * Waits for the encodings and puts each on its step; a frame that failed to encode is left out and
   * counted in `counters.frames_encode_failed`. Returns the FIRST observation's frame (key 0), when recorded.
   */
  async attach(steps: StepRecord[], counters: Record<string, number>): Promise<Uint8Array | undefined> {
    const frames = await this.recorder.finish();
    for (const st of steps) {
      const f = frames.get(st.index);
      if (f) st.frame = f;
    }
    if (this.recorder.stats.failed > 0) counters.frames_encode_failed = this.recorder.stats.failed;
    return frames.get(0);
  }

  /** Bytes of the frames encoded so far (the observation budget counts them). */
  get recordedBytes(): number {
    return this.recorder.stats.bytes;
  }

  get firstError(): string | undefined {
    return this.recorder.stats.firstError;
  }
}
