/** With frames on every step, memory stays bounded: the writer holds about two blocks plus one record. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { syntheticEpisode, TrajectoryWriter } from "@farm/trajectory";
import { tempDir } from "./helpers.ts";

describe("bounded memory", () => {
  it("writing far more frame bytes than the memory budget keeps RSS growth under it", async () => {
    const dir = await tempDir();
    const budget = 64 * 1024 * 1024;
    const w = await TrajectoryWriter.open({ outDir: dir, writerId: "mem", codec: "null", frameEvery: 1 });
    const before = process.memoryUsage().rss;
    let peak = 0;
    for (let i = 0; i < 150; i++) {
      const r = syntheticEpisode(i, { steps: 100, frames: true });
      // Fresh frame buffers per episode, as a runner would hand over.
      for (const s of r.steps) s.frame = Buffer.from(s.frame!);
      await w.append(r);
      peak = Math.max(peak, process.memoryUsage().rss - before);
    }
    await w.close();
    assert.ok(w.stats.bytesClosed > 2 * budget, `wrote ${w.stats.bytesClosed} bytes`);
    assert.ok(peak < budget, `RSS grew by ${(peak / 2 ** 20).toFixed(0)} MiB while writing ${(w.stats.bytesClosed / 2 ** 20).toFixed(0)} MiB`);
  });
});
