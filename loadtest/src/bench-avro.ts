/**
 * `farm bench avro`: TrajectoryWriter (episode → Avro record, blocks, codec, fsync'd files on disk) against
 * raw avsc encoding of the same records (avsc BlockEncoder, same codec and block size, into a sink that
 * discards), in alternating rounds for a fixed total time each, without and with PNG frames, side by side.
 * Options: --seconds S per measurement (default 2), --codec null|deflate|snappy (default deflate),
 * --steps N per episode (default 100), --frame-every K for the frames variant (default 5), --frame-size px (default 48).
 * Last line (the variant with the lower ratio, i.e. the conservative one):
 * `writer_rec_s=<x> raw_rec_s=<y> writer_over_raw=<ratio>`. Goal: ratio ≥ 0.5.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import avro from "avsc";
import { avroTypeFor, avscEncoderCodecs, CODEC_NAMES, episodeSchema, episodeToAvro, syntheticEpisode, TrajectoryWriter, type CodecName, type EpisodeRecord } from "@farm/trajectory";
import type { BenchOptions, Scenario } from "./scenario.ts";

interface Figures {
  records: number;
  seconds: number;
  /** Avro-encoded (uncompressed) record bytes: the same payload for both sides. */
  payloadBytes: number;
  /** Bytes that came out (compressed file or sink). */
  outputBytes: number;
}

function emptyFigures(): Figures {
  return { records: 0, seconds: 0, payloadBytes: 0, outputBytes: 0 };
}

function add(total: Figures, f: Figures): void {
  total.records += f.records;
  total.seconds += f.seconds;
  total.payloadBytes += f.payloadBytes;
  total.outputBytes += f.outputBytes;
}

const recS = (f: Figures) => f.records / f.seconds;
const mbS = (f: Figures) => f.payloadBytes / f.seconds / 1e6;

function numOpt(opts: BenchOptions, name: string, dflt: number): number {
  const v = opts[name];
  if (v === undefined || v === true) return dflt;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, got ${String(v)}`);
  return n;
}

/** avsc alone: BlockEncoder → a sink that only counts bytes. Honours backpressure like a real stream user. */
async function measureRaw(values: unknown[], sizes: number[], codec: CodecName, seconds: number): Promise<Figures> {
  const type = avroTypeFor(episodeSchema);
  const encoder = new avro.streams.BlockEncoder(type, { codec, codecs: avscEncoderCodecs(), blockSize: 64 * 1024 });
  let outputBytes = 0;
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      outputBytes += chunk.length;
      cb();
    },
  });
  const done = pipeline(encoder, sink);
  let records = 0;
  let payloadBytes = 0;
  const t0 = performance.now();
  const deadline = t0 + seconds * 1000;
  while (performance.now() < deadline) {
    for (let i = 0; i < values.length; i++) {
      records++;
      payloadBytes += sizes[i]!;
      if (!encoder.write(values[i])) await new Promise((r) => encoder.once("drain", r));
    }
  }
  encoder.end();
  await done;
  return { records, seconds: (performance.now() - t0) / 1000, payloadBytes, outputBytes };
}

/** The writer: conversion, encoding, blocks, codec, files renamed into place (close included). */
async function measureWriter(records: EpisodeRecord[], sizes: number[], codec: CodecName, frameEvery: number, seconds: number): Promise<Figures> {
  const outDir = await mkdtemp(path.join(os.tmpdir(), "bench-avro-"));
  try {
    const writer = await TrajectoryWriter.open({ outDir, writerId: "bench", codec, frameEvery, maxEpisodesPerFile: 1_000_000 });
    let n = 0;
    let payloadBytes = 0;
    const t0 = performance.now();
    const deadline = t0 + seconds * 1000;
    while (performance.now() < deadline) {
      for (let i = 0; i < records.length; i++) {
        n++;
        payloadBytes += sizes[i]!;
        await writer.append(records[i]!);
      }
    }
    await writer.close();
    return { records: n, seconds: (performance.now() - t0) / 1000, payloadBytes, outputBytes: writer.stats.bytesClosed };
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
}

interface Variant {
  name: string;
  writer: Figures;
  raw: Figures;
}

async function runVariant(name: string, frames: boolean, o: { codec: CodecName; seconds: number; steps: number; frameEvery: number; frameSize: number }): Promise<Variant> {
  const frameEvery = frames ? o.frameEvery : 0;
  // Distinct records (episode ids, seeds), reused round-robin; built before timing.
  const records = Array.from({ length: 64 }, (_, i) => syntheticEpisode(i, { steps: o.steps, frames, frameSize: o.frameSize }));
  const type = avroTypeFor(episodeSchema);
  const values = records.map((r) => episodeToAvro(r, frameEvery));
  const sizes = values.map((v) => type.toBuffer(v).length);
  // Short warm-up of both paths so neither pays for JIT compilation in its figures.
  await measureRaw(values, sizes, o.codec, 0.2);
  await measureWriter(records, sizes, o.codec, frameEvery, 0.2);
  // Alternate short rounds so a load change on a shared machine hits both sides alike.
  const rounds = 4;
  const raw = emptyFigures();
  const writer = emptyFigures();
  for (let i = 0; i < rounds; i++) {
    add(raw, await measureRaw(values, sizes, o.codec, o.seconds / rounds));
    add(writer, await measureWriter(records, sizes, o.codec, frameEvery, o.seconds / rounds));
  }
  return { name, raw, writer };
}

export const scenario: Scenario = {
  async run(opts: BenchOptions): Promise<void> {
    const codec = (typeof opts.codec === "string" ? opts.codec : "deflate") as CodecName;
    if (!CODEC_NAMES.includes(codec)) throw new Error(`--codec must be one of ${CODEC_NAMES.join(", ")}`);
    const o = {
      codec,
      seconds: numOpt(opts, "seconds", 2),
      steps: Math.round(numOpt(opts, "steps", 100)),
      frameEvery: Math.round(numOpt(opts, "frame-every", 5)),
      frameSize: Math.round(numOpt(opts, "frame-size", 48)),
    };
    const sample = syntheticEpisode(0, { steps: o.steps, frames: true, frameSize: o.frameSize });
    const frameBytes = sample.steps[0]!.frame!.length;
    console.log(`codec=${codec} steps/episode=${o.steps} extras/step=${sample.steps[0]!.extras.length} seconds/measurement=${o.seconds}`);
    console.log(`frames variant: PNG ${o.frameSize}x${o.frameSize} (~${(frameBytes / 1024).toFixed(1)} KiB) on every ${o.frameEvery}th step`);
    const variants = [await runVariant("no frames", false, o), await runVariant("frames", true, o)];
    const pad = (s: string, n: number) => s.padStart(n);
    console.log(`${"variant".padEnd(10)}${pad("raw rec/s", 12)}${pad("writer rec/s", 14)}${pad("raw MB/s", 10)}${pad("writer MB/s", 13)}${pad("out MiB w/r", 14)}${pad("ratio", 8)}`);
    for (const v of variants) {
      const out = `${(v.writer.outputBytes / 2 ** 20).toFixed(0)}/${(v.raw.outputBytes / 2 ** 20).toFixed(0)}`;
      console.log(
        `${v.name.padEnd(10)}${pad(recS(v.raw).toFixed(0), 12)}${pad(recS(v.writer).toFixed(0), 14)}${pad(mbS(v.raw).toFixed(1), 10)}${pad(mbS(v.writer).toFixed(1), 13)}${pad(out, 14)}${pad((recS(v.writer) / recS(v.raw)).toFixed(2), 8)}`,
      );
    }
    console.log("MB/s = Avro-encoded record bytes (before compression) per second; writer includes conversion, files and fsync.");
    const worst = variants.reduce((a, b) => (recS(a.writer) / recS(a.raw) <= recS(b.writer) / recS(b.raw) ? a : b));
    console.log(`last line: ${worst.name} variant (lower ratio)`);
    console.log(`writer_rec_s=${recS(worst.writer).toFixed(1)} raw_rec_s=${recS(worst.raw).toFixed(1)} writer_over_raw=${(recS(worst.writer) / recS(worst.raw)).toFixed(3)}`);
  },
};
