/**
 * The settle policies' sources on a real driver (settle.ts `SettleSignals`), one per kind of signal: the element
 * tree as the driver reads it (the accessibility forwarder when it serves the device, else `uiautomator dump`),
 * frames (the emulator's gRPC screenshot where the driver has it, else screencap) reduced to a hash, and the
 * accessibility events of `uiautomator events` (`Device.openAccessibilityEvents`), opened once per episode.
 */
import { createHash } from "node:crypto";
import { isScreenTree, type A11yEventStream, type Device } from "@farm/adb";
import type { A11yEventClock, SettleSignals } from "./settle.ts";
import { elementsOf, readTree } from "./ui-elements.ts";

function hash(bytes: Uint8Array): string {
  return createHash("sha1").update(bytes).digest("base64");
}

/** The element tree of the screen as a key (the elements AndroidWorld compares: text, class, bounds, state). */
export async function treeKeyOf(device: Device, timeoutMs: number): Promise<string | undefined> {
  const t = await readTree(device, timeoutMs);
  return isScreenTree(t) ? JSON.stringify(elementsOf(t)) : undefined;
}

/** The screen's pixels as a key: a hash of the raw frame (gRPC) or the screenshot. */
export async function frameKeyOf(device: Device, timeoutMs: number): Promise<string | undefined> {
  if (device.frame) {
    const f = await device.frame({ raw: true, rawFormat: "rgb", timeoutMs });
    if (!("width" in f)) return undefined;
    const px = f.rgb ?? f.rgba;
    return px ? hash(px) : undefined;
  }
  const shot = await device.screenshot({ timeoutMs });
  return "rgba" in shot ? hash(shot.rgba) : undefined;
}

/** An episode's accessibility event stream as a clock of the latest event; `close()` ends the device's command. */
export class EventClock implements A11yEventClock {
  lastEventAt: number | undefined;
  count = 0;
  private openFailure: string | undefined;

  private constructor(private readonly stream: A11yEventStream | undefined, failure?: string) {
    this.openFailure = failure;
    stream?.onEvent(() => {
      this.lastEventAt = performance.now();
      this.count++;
    });
  }

  /** Opens the device's event stream; a device without one (or a failed start) gives a clock that says why. */
  static async open(device: Device, timeoutMs: number): Promise<EventClock> {
    if (!device.openAccessibilityEvents) return new EventClock(undefined, "the device offers no accessibility events");
    const s = await device.openAccessibilityEvents({ timeoutMs });
    if (!("onEvent" in s)) return new EventClock(undefined, `uiautomator events: ${s.status}: ${s.message}`);
    return new EventClock(s);
  }

  get failed(): string | undefined {
    return this.openFailure ?? this.stream?.failed;
  }

  close(): void {
    this.stream?.close();
  }
}

/** The signals of one device for one episode (`events`: the clock opened for it, when the policy uses events). */
export function deviceSettleSignals(device: Device, timeoutMs: number, events?: A11yEventClock): SettleSignals {
  return {
    treeKey: () => treeKeyOf(device, timeoutMs),
    frameKey: () => frameKeyOf(device, timeoutMs),
    events: () => events,
  };
}
