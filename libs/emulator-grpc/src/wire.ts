/**
 * Hand-written protobuf encoding of exactly the messages a lean client sends and reads (TouchEvent,
 * KeyboardEvent, ImageFormat, SnapshotPackage out; Image, EmulatorStatus, SnapshotPackage in), with the
 * field numbers of our .proto files, plus gRPC's 5-byte message framing. Why not proto-loader: its
 * reflection-driven encode/decode is a large part of grpc-js's per-call CPU, and the farm calls these
 * few messages on every step. Unknown fields are skipped, as protobuf requires.
 */
import type { EmulatorStatusMsg, ImageMsg, ImageTransportMsg, KeyboardEventMsg, SnapshotPackageMsg, TouchEventMsg } from "./messages.ts";

const VARINT = 0;
const I64 = 1;
const LEN = 2;
const I32 = 5;

/** A growable byte writer; one per message (messages here are tiny). */
class Writer {
  private buf = Buffer.allocUnsafe(64);
  private n = 0;

  private room(k: number): void {
    if (this.n + k <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.n + k));
    this.buf.copy(next, 0, 0, this.n);
    this.buf = next;
  }

  /** Varint of a non-negative integer, or a negative int32 as its 10-byte two's complement (protobuf's rule). */
  varint(v: number): this {
    this.room(10);
    if (v < 0) {
      let big = BigInt.asUintN(64, BigInt(Math.trunc(v)));
      while (big > 0x7fn) {
        this.buf[this.n++] = Number(big & 0x7fn) | 0x80;
        big >>= 7n;
      }
      this.buf[this.n++] = Number(big);
      return this;
    }
    while (v > 0x7f) {
      this.buf[this.n++] = (v % 128) | 0x80;
      v = Math.floor(v / 128);
    }
    this.buf[this.n++] = v;
    return this;
  }

  /** A scalar field, left out when it is the default (proto3). */
  int(field: number, v: number | undefined): this {
    if (!v) return this;
    return this.varint((field << 3) | VARINT).varint(v);
  }

  /** A bytes/string field, left out when empty (proto3). */
  bytes(field: number, b: Uint8Array): this {
    return b.length === 0 ? this : this.message(field, b);
  }

  /** An embedded message, written even when empty (a repeated element counts). */
  message(field: number, b: Uint8Array): this {
    this.varint((field << 3) | LEN).varint(b.length);
    this.room(b.length);
    this.buf.set(b, this.n);
    this.n += b.length;
    return this;
  }

  string(field: number, s: string | undefined): this {
    return s ? this.bytes(field, Buffer.from(s, "utf8")) : this;
  }

  done(): Buffer {
    return this.buf.subarray(0, this.n);
  }
}

/** A cursor over a message's bytes. */
class Reader {
  pos = 0;
  constructor(readonly buf: Uint8Array, readonly end = buf.length) {}

  varint(): number {
    let v = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new RangeError("protobuf: truncated varint");
      const b = this.buf[this.pos++]!;
      v += (b & 0x7f) * mul;
      if (b < 0x80) return v;
      mul *= 128;
    }
    throw new RangeError("protobuf: varint longer than 10 bytes");
  }

  /** The bytes of a length-delimited field (a view, not a copy). */
  lenDelimited(): Uint8Array {
    const n = this.varint();
    if (this.pos + n > this.end) throw new RangeError("protobuf: length past the end of the message");
    const v = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return v;
  }

  skip(wire: number): void {
    if (wire === VARINT) this.varint();
    else if (wire === I64) this.pos += 8;
    else if (wire === LEN) this.lenDelimited();
    else if (wire === I32) this.pos += 4;
    else throw new RangeError(`protobuf: wire type ${wire} not supported`);
    if (this.pos > this.end) throw new RangeError("protobuf: field past the end of the message");
  }

  /** Calls `on(field, wireType)` per field; `on` reads the value or returns false to have it skipped. */
  fields(on: (field: number, wire: number) => boolean): void {
    while (this.pos < this.end) {
      const tag = this.varint();
      const field = Math.floor(tag / 8);
      const wire = tag & 7;
      if (!on(field, wire)) this.skip(wire);
    }
  }
}

const utf8 = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("utf8");

/** TouchEvent { repeated Touch touches = 1; int32 display = 2 }, Touch { x=1 y=2 identifier=3 pressure=4 touch_major=5 touch_minor=6 expiration=7 }. */
export function encodeTouchEvent(msg: TouchEventMsg): Buffer {
  const w = new Writer();
  for (const t of msg.touches) {
    const inner = new Writer().int(1, t.x).int(2, t.y).int(3, t.identifier).int(4, t.pressure).int(5, t.touch_major).int(6, t.touch_minor).int(7, t.expiration).done();
    w.message(1, inner);
  }
  return w.int(2, msg.display).done();
}

/** KeyboardEvent { codeType=1 eventType=2 keyCode=3 key=4 text=5 }. */
export function encodeKeyboardEvent(msg: KeyboardEventMsg): Buffer {
  return new Writer().int(1, msg.codeType).int(2, msg.eventType).int(3, msg.keyCode).string(4, msg.key).string(5, msg.text).done();
}

/** InputEvent { oneof type { key_event=1 touch_event=2 … } }: one event of a streamInputEvent call. */
export function encodeInputEvent(ev: { touch: TouchEventMsg } | { key: KeyboardEventMsg }): Buffer {
  return "touch" in ev ? new Writer().message(2, encodeTouchEvent(ev.touch)).done() : new Writer().message(1, encodeKeyboardEvent(ev.key)).done();
}

/** ImageFormat { format=1 width=3 height=4 display=5 transport=6 { channel=1 handle=2 } } (rotation, folded display left out). */
export function encodeImageFormat(msg: { format: number; width?: number; height?: number; display?: number; transport?: ImageTransportMsg }): Buffer {
  const w = new Writer().int(1, msg.format).int(3, msg.width).int(4, msg.height).int(5, msg.display);
  if (msg.transport) w.message(6, new Writer().int(1, msg.transport.channel).string(2, msg.transport.handle).done());
  return w.done();
}

/** ImageTransport { channel=1 handle=2 }. */
function decodeImageTransport(buf: Uint8Array): ImageTransportMsg {
  const t: ImageTransportMsg = { channel: 0, handle: "" };
  const r = new Reader(buf);
  r.fields((field, wire) => {
    if (field === 1 && wire === VARINT) t.channel = r.varint();
    else if (field === 2 && wire === LEN) t.handle = utf8(r.lenDelimited());
    else return false;
    return true;
  });
  return t;
}

/** VmRunState { RunState state = 1 } (setVmState: RUNNING, PAUSED, SHUTDOWN…). */
export function encodeVmRunState(msg: { state: number }): Buffer {
  return new Writer().int(1, msg.state).done();
}

/** SnapshotPackage { snapshot_id=1 … format=5 path=6 } as a request (no payload). */
export function encodeSnapshotRequest(msg: { snapshot_id: string; format?: number; path?: string }): Buffer {
  return new Writer().string(1, msg.snapshot_id).int(5, msg.format).string(6, msg.path).done();
}

/** Image { ImageFormat format=1 {format=1 width=3 height=4 display=5 transport=6}; width=2 height=3; bytes image=4; seq=5; timestampUs=6 }; `image` is a view into `buf`. */
export function decodeImage(buf: Uint8Array): ImageMsg {
  const img: ImageMsg = { format: { format: 0, width: 0, height: 0, display: 0 }, width: 0, height: 0, image: new Uint8Array(0), seq: 0, timestampUs: 0 };
  const r = new Reader(buf);
  r.fields((field, wire) => {
    if (field === 1 && wire === LEN) {
      const f = r.lenDelimited();
      const fr = new Reader(f);
      fr.fields((ff, fw) => {
        if (ff === 6 && fw === LEN) {
          img.format.transport = decodeImageTransport(fr.lenDelimited());
          return true;
        }
        if (fw !== VARINT) return false;
        if (ff === 1) img.format.format = fr.varint();
        else if (ff === 3) img.format.width = fr.varint();
        else if (ff === 4) img.format.height = fr.varint();
        else if (ff === 5) img.format.display = fr.varint();
        else return false;
        return true;
      });
    } else if (field === 4 && wire === LEN) img.image = r.lenDelimited();
    else if (wire !== VARINT) return false;
    else if (field === 2) img.width = r.varint();
    else if (field === 3) img.height = r.varint();
    else if (field === 5) img.seq = r.varint();
    else if (field === 6) img.timestampUs = r.varint();
    else return false;
    return true;
  });
  return img;
}

/** EmulatorStatus { version=1 uptime=2 booted=3 vmConfig=4 hardwareConfig=5 { repeated Entry entry=1 { key=1 value=2 } } }. */
export function decodeEmulatorStatus(buf: Uint8Array): EmulatorStatusMsg {
  const st: EmulatorStatusMsg = { version: "", uptime: 0, booted: false, hardwareConfig: { entry: [] } };
  const r = new Reader(buf);
  r.fields((field, wire) => {
    if (field === 1 && wire === LEN) st.version = utf8(r.lenDelimited());
    else if (field === 2 && wire === VARINT) st.uptime = r.varint();
    else if (field === 3 && wire === VARINT) st.booted = r.varint() !== 0;
    else if (field === 5 && wire === LEN) {
      const list = new Reader(r.lenDelimited());
      list.fields((lf, lw) => {
        if (lf !== 1 || lw !== LEN) return false;
        const e = new Reader(list.lenDelimited());
        const entry = { key: "", value: "" };
        e.fields((ef, ew) => {
          if (ew !== LEN || (ef !== 1 && ef !== 2)) return false;
          entry[ef === 1 ? "key" : "value"] = utf8(e.lenDelimited());
          return true;
        });
        st.hardwareConfig!.entry.push(entry);
        return true;
      });
    } else return false;
    return true;
  });
  return st;
}

/** SnapshotPackage { snapshot_id=1 payload=2 success=3 err=4 format=5 path=6 } as an answer. */
export function decodeSnapshotPackage(buf: Uint8Array): SnapshotPackageMsg {
  const p: SnapshotPackageMsg = { snapshot_id: "", success: false, err: new Uint8Array(0) };
  const r = new Reader(buf);
  r.fields((field, wire) => {
    if (field === 1 && wire === LEN) p.snapshot_id = utf8(r.lenDelimited());
    else if (field === 2 && wire === LEN) p.payload = r.lenDelimited();
    else if (field === 3 && wire === VARINT) p.success = r.varint() !== 0;
    else if (field === 4 && wire === LEN) p.err = r.lenDelimited();
    else if (field === 5 && wire === VARINT) p.format = r.varint();
    else if (field === 6 && wire === LEN) p.path = utf8(r.lenDelimited());
    else return false;
    return true;
  });
  return p;
}

/** gRPC's length-prefixed message: 1 byte "compressed" (0), 4 bytes big-endian length, the message. */
export function grpcFrame(msg: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(5 + msg.length);
  out[0] = 0;
  out.writeUInt32BE(msg.length, 1);
  out.set(msg, 5);
  return out;
}

/**
 * Splits a gRPC response body into its messages; throws on a compressed message (we never ask for
 * compression) or a truncated frame.
 */
export function grpcMessages(body: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let pos = 0;
  while (pos < body.length) {
    if (pos + 5 > body.length) throw new RangeError("gRPC: truncated message prefix");
    if (body[pos] !== 0) throw new RangeError("gRPC: compressed message (no compression was negotiated)");
    const n = body.readUInt32BE(pos + 1);
    if (pos + 5 + n > body.length) throw new RangeError("gRPC: truncated message");
    out.push(body.subarray(pos + 5, pos + 5 + n));
    pos += 5 + n;
  }
  return out;
}
