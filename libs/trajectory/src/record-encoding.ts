/**
 * What every farm container file shares, whoever writes it (TrajectoryWriter or writeEpisodeFile): the
 * episode schema text, the header metadata and the encoding of one record.
 */
import type { Type } from "avsc";
import { blockCodec } from "./block-codecs.ts";
import type { ContainerFileOptions } from "./container-writer.ts";
import { episodeToAvro } from "./episode-codec.ts";
import { cachedAvroTypeFor } from "./logical-types.ts";
import { episodeSchema, META_FRAME_EVERY, META_SCHEMA_VERSION, META_WRITER_ID, SCHEMA_VERSION } from "./schema.ts";
import { TrajectoryError, type CodecName, type EpisodeRecord } from "./types.ts";

const EPISODE_SCHEMA_JSON = JSON.stringify(episodeSchema);

/** The header of a farm container file: episode schema, codec and the farm's metadata (ContainerFileWriter.create). */
export function episodeFileHeader(
  codec: CodecName,
  writerId: string,
  frameEvery: number,
): Pick<ContainerFileOptions, "schemaJson" | "codecName" | "codec" | "meta"> {
  return {
    schemaJson: EPISODE_SCHEMA_JSON,
    codecName: codec,
    codec: blockCodec(codec),
    meta: {
      [META_SCHEMA_VERSION]: String(SCHEMA_VERSION),
      [META_WRITER_ID]: writerId,
      [META_FRAME_EVERY]: String(frameEvery),
    },
  };
}

/** Encodes records into a reused scratch buffer; a returned buffer is valid until the next `encode`. */
export class RecordEncoder {
  private scratch = Buffer.allocUnsafe(64 * 1024);
  private readonly type = cachedAvroTypeFor(episodeSchema);

  encode(record: EpisodeRecord, frameEvery: number): Buffer {
    const value = episodeToAvro(record, frameEvery);
    let end: number;
    try {
      end = this.type.encode(value, this.scratch, 0);
      if (end < 0) {
        // avsc reports the missing byte count; grow once and encode again.
        this.scratch = Buffer.allocUnsafe(Math.max(this.scratch.length * 2, this.scratch.length - end));
        end = this.type.encode(value, this.scratch, 0);
      }
    } catch (err) {
      throw invalidRecord(this.type, value, record, err);
    }
    return this.scratch.subarray(0, end);
  }
}

/** A precise message (field path) for a record avsc could not encode. */
function invalidRecord(type: Type, value: unknown, record: EpisodeRecord, cause: unknown): TrajectoryError {
  const paths: string[] = [];
  type.isValid(value, { errorHook: (p) => paths.push(p.join(".")) });
  const where = paths.length ? ` at ${paths.slice(0, 3).join(", ")}` : "";
  return new TrajectoryError("invalid_record", `episode ${JSON.stringify(record.episodeId)} does not fit the schema${where}`, false, { cause });
}
