/**
 * The README's quick start for one's own model server, run as written (issue 39): its fenced commands are taken from
 * the README section, the model server (vLLM, llama-server) replaced by the OpenAI-compatible stand-in, host names and
 * ports by local ones, and run with bash: `farm run` and a campaign on a worker each end in a Parquet data set. Every
 * block of the section is accounted for, so no command stands in the README that this test does not run.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort } from "@farm/net-ports";
import { startLlmStandIn, type LlmStandIn } from "@farm/local-services";
import { REPO } from "./fixtures.ts";

const HEADING = "#### Quick start: an LLM agent on your own model server";
const KEY = "sk-your-key";
const SOLVER = [{ click_text: "NEW NOTE" }, { type_into: "title_input", text: "milk" }, { type_into: "body_input", text: "2 litres" }, { click_text: "SAVE" }];

/** The section's fenced blocks by their tag (the word after `sh` in the fence's info string). */
export function quickStartBlocks(readme: string): Map<string, string> {
  const at = readme.indexOf(HEADING);
  assert.ok(at >= 0, `README.md has the section '${HEADING}'`);
  const rest = readme.slice(at + HEADING.length);
  const section = rest.slice(0, rest.search(/^#{1,4} /m) >= 0 ? rest.search(/^#{1,4} /m) : undefined);
  const blocks = new Map<string, string>();
  for (const m of section.matchAll(/^```(\S*)[ \t]*(\S*)\n([\s\S]*?)^```$/gm)) {
    assert.equal(m[1], "sh", `a block of the quick start is shell (${m[0].slice(0, 60)})`);
    assert.ok(m[2] && !blocks.has(m[2]), `each block has a tag of its own (${m[0].slice(0, 60)})`);
    blocks.set(m[2], m[3]!);
  }
  return blocks;
}

const readme = fs.readFileSync(path.join(REPO, "README.md"), "utf8");
const blocks = quickStartBlocks(readme);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "farm-quick-start-"));
let llm: LlmStandIn;
let ports: Record<string, number>;

before(async () => {
  llm = await startLlmStandIn({ apiKey: KEY, solver: SOLVER, keepRequests: 4 });
  ports = { "6390": await freePort(), "5037": await freePort(), "8420": await freePort(), "9465": await freePort() };
});
after(async () => {
  await llm?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A block as this machine runs it: the stand-in for the model server's URL and host, local folders and free ports. */
function localised(block: string): string {
  let s = block
    .replaceAll("https://gpu-host:8000/v1", llm.endpoint)
    .replaceAll("https://api.example.com/v1", llm.endpoint)
    .replaceAll("gpu-host", "127.0.0.1")
    .replaceAll("api.example.com", "127.0.0.1")
    .replaceAll("$PWD/cert.pem", path.join(dir, "cert.pem"))
    .replaceAll("./out/", `${dir}/out/`);
  for (const [port, free] of Object.entries(ports)) s = s.replace(new RegExp(`\\b${port}\\b`, "g"), String(free));
  return s;
}

/** The commands of the processes still in process group `pgid`. */
function leftRunning(pgid: number): string[] {
  const r = spawnSync("ps", ["-o", "pid=,args=", "-g", String(pgid)], { encoding: "utf8" });
  return r.stdout.split("\n").map((l) => l.trim()).filter((l) => l && !/^\d+ ps /.test(l));
}

/** Runs `script` with bash in its own process group (all of it killed afterwards), `set -euo pipefail`. */
function bash(script: string, cwd: string, timeoutMs: number): Promise<{ code: number | null; out: string; left: string[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", `set -euo pipefail\n${script}`], { cwd, detached: true, env: { ...process.env, FARM_LOG_LEVEL: "warn" } });
    let out = "";
    child.stdout.on("data", (b: Buffer) => (out = (out + b.toString()).slice(-20_000)));
    child.stderr.on("data", (b: Buffer) => (out = (out + b.toString()).slice(-20_000)));
    const killGroup = () => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(killGroup, timeoutMs);
    child.on("error", reject);
    // On exit, not close: a background process the script failed to stop would hold its output open.
    child.on("exit", (code) => {
      clearTimeout(timer);
      const left = leftRunning(child.pid!);
      killGroup();
      resolve({ code, out: left.length ? `${out}\nstill running after the script: ${left.join("; ")}` : out, left });
    });
  });
}

/** The data set an export wrote: the episodes its manifest lists and its Parquet shards. */
function dataset(folder: string): { episodes: string[]; shards: string[] } {
  const manifest = JSON.parse(fs.readFileSync(path.join(folder, "manifest.json"), "utf8")) as { shards: { steps: string; episodeIds: string[] }[] };
  return { episodes: manifest.shards.flatMap((s) => s.episodeIds), shards: manifest.shards.map((s) => s.steps).filter((f) => f.endsWith(".parquet") && fs.existsSync(path.join(folder, f))) };
}

test("the quick start's blocks are the ones this test runs", () => {
  assert.deepEqual([...blocks.keys()].sort(), ["campaign", "farm-host", "farm-run", "gpu-host", "llama-server", "openai-compatible", "vllm"]);
});

test("the model servers listen beyond loopback, over https, asking for the key (replaced here by the stand-in)", async () => {
  for (const tag of ["vllm", "llama-server"]) {
    const lines = blocks.get(tag)!.trim().split("\n");
    assert.equal(lines.length, 1, `${tag}: one command`);
    assert.match(lines[0]!, /--host 0\.0\.0\.0 --port 8000 --api-key sk-your-key /, tag);
    assert.match(lines[0]!, /--ssl-key-?file key\.pem --ssl-cert-?file cert\.pem$/, tag);
  }
  // The certificate step runs as written.
  const r = await bash(blocks.get("gpu-host")!, dir, 60_000);
  assert.equal(r.code, 0, r.out);
  assert.ok(fs.existsSync(path.join(dir, "cert.pem")) && fs.existsSync(path.join(dir, "key.pem")));
});

test("farm run, as the README says, gives a Parquet data set; the key reaches the model server", async () => {
  const script = [localised(blocks.get("farm-host")!), localised(blocks.get("farm-run")!)].join("\n");
  const before = llm.served;
  const r = await bash(script, REPO, 240_000);
  assert.equal(r.code, 0, r.out);
  const ds = dataset(path.join(dir, "out/llm-run-dataset"));
  assert.equal(ds.episodes.length, 2, JSON.stringify(ds));
  assert.ok(ds.shards.length > 0, "Parquet shards written");
  assert.ok(llm.served > before, "the model was asked");
  assert.equal(llm.requests.at(-1)!.authorization, `Bearer ${KEY}`);
  assert.ok(!r.out.includes(KEY), "the key is in no output");
});

test("a campaign on a worker, as the README says (any OpenAI-compatible URL), gives a Parquet data set", async () => {
  const script = [localised(blocks.get("farm-host")!), localised(blocks.get("openai-compatible")!), localised(blocks.get("campaign")!)].join("\n");
  const r = await bash(script, REPO, 240_000);
  assert.equal(r.code, 0, r.out);
  assert.deepEqual(r.left, [], "the README's last line stops what it started");
  const ds = dataset(path.join(dir, "out/llm-campaign-dataset"));
  assert.deepEqual(ds.episodes.sort(), ["llm-notes-0", "llm-notes-1", "llm-notes-2", "llm-notes-3"]);
  assert.ok(ds.shards.length > 0, "Parquet shards written");
  assert.equal(llm.requests.at(-1)!.authorization, `Bearer ${KEY}`);
});
