/** A writer killed mid-file leaves no partial file where readers look, and every visible file reads cleanly. */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";
import { listTrajectoryFiles, openTrajectoryFile, readTrajectories, TrajectoryWriter, syntheticEpisode } from "@farm/trajectory";
import { avrocat, requireInteropTools, tempDir } from "./helpers.ts";

const script = fileURLToPath(new URL("./fixtures/slow-writer.ts", import.meta.url));

/** Runs the slow writer until `ready(appended, closed)` holds, then SIGKILLs it. */
function runAndKill(outDir: string, ready: (appended: number, closed: number) => boolean): Promise<{ appended: number; closed: string[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", script, outDir, "deflate"], { stdio: ["ignore", "pipe", "inherit"] });
    let appended = 0;
    const closed: string[] = [];
    let buf = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error("slow writer did not reach the kill point in 20 s"));
    }, 20_000);
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      buf += chunk;
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.startsWith("appended ")) appended = Number(line.slice(9));
        if (line.startsWith("closed ")) closed.push(line.split(" ")[1]!);
        if (ready(appended, closed.length) && child.exitCode === null && !child.killed) child.kill("SIGKILL");
      }
    });
    child.on("exit", (_code, signal) => {
      clearTimeout(timer);
      if (signal !== "SIGKILL") reject(new Error(`slow writer exited on its own (${signal ?? _code})`));
      else resolve({ appended, closed });
    });
  });
}

async function allNames(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) if (e.isFile()) out.push(path.join(e.parentPath ?? e.path, e.name));
  return out;
}

describe("crash safety", () => {
  it("SIGKILL mid-file: only complete files are visible and they all read cleanly", async () => {
    requireInteropTools();
    const dir = await tempDir();
    // Kill after two files were closed and the third is half full (appended 7 or 8 of 9).
    const { appended, closed } = await runAndKill(dir, (n, c) => c >= 2 && n >= 7 && n % 3 !== 0);
    assert.ok(closed.length >= 2);

    const every = await allNames(dir);
    const temps = every.filter((f) => path.basename(f).endsWith(".tmp"));
    assert.equal(temps.length, 1, `one unfinished temporary file: ${every.join(", ")}`);
    assert.ok(path.basename(temps[0]!).startsWith("."), "temporary names are hidden");
    assert.ok((await stat(temps[0]!)).size > 0, "the killed file had data on disk");

    const { files, skipped } = await listTrajectoryFiles([dir]);
    assert.deepEqual(files.sort(), closed.sort(), "visible files = files the writer reported closed");
    assert.deepEqual(skipped, temps);
    let n = 0;
    for (const f of files) {
      const opened = await openTrajectoryFile(f);
      let inFile = 0;
      for await (const _ of opened.episodes) inFile++;
      assert.equal(inFile, 3, `${f} is complete`);
      assert.equal(avrocat(f).length, 3, `avrocat reads ${f}`);
      n += inFile;
    }
    assert.ok(n < appended, "episodes of the unfinished file are not visible");

    // The same writer id restarted next to the leftover temporary file takes a fresh sequence number.
    const w = await TrajectoryWriter.open({ outDir: dir, writerId: "crashy", maxEpisodesPerFile: 3 });
    await w.append(syntheticEpisode(100, { steps: 2 }));
    await w.close();
    let total = 0;
    for await (const _ of readTrajectories(dir)) total++;
    assert.equal(total, n + 1);
  });
});
