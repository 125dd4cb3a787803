/**
 * ADB transport packets: a 24-byte little-endian header (command, arg0, arg1, length, byte-sum, magic)
 * followed by the payload. See shared/reference/adb-device-protocol.md §1.
 */

export const A_CNXN = 0x4e584e43;
export const A_OPEN = 0x4e45504f;
export const A_OKAY = 0x59414b4f;
export const A_WRTE = 0x45545257;
export const A_CLSE = 0x45534c43;
export const A_AUTH = 0x48545541;
export const A_STLS = 0x534c5453;

/** Version we announce; the host then sends zero checksums, which adb 29 never verifies anyway. */
export const A_VERSION = 0x01000001;
export const HEADER_SIZE = 24;

export interface Packet {
  command: number;
  arg0: number;
  arg1: number;
  data: Buffer;
}

function byteSum(data: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < data.length; i++) sum += data[i]!;
  return sum >>> 0;
}

export function encodePacket(command: number, arg0: number, arg1: number, data: Uint8Array = EMPTY): Buffer {
  const out = Buffer.allocUnsafe(HEADER_SIZE + data.length);
  out.writeUInt32LE(command >>> 0, 0);
  out.writeUInt32LE(arg0 >>> 0, 4);
  out.writeUInt32LE(arg1 >>> 0, 8);
  out.writeUInt32LE(data.length, 12);
  out.writeUInt32LE(byteSum(data), 16);
  out.writeUInt32LE((command ^ 0xffffffff) >>> 0, 20);
  out.set(data, HEADER_SIZE);
  return out;
}

const EMPTY = Buffer.alloc(0);

/** Accumulates TCP chunks and yields whole packets (payloads may straddle reads; reads may hold several). */
export class PacketReader {
  private chunks: Buffer[] = [];
  private buffered = 0;

  push(chunk: Buffer): Packet[] {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    const out: Packet[] = [];
    for (;;) {
      if (this.buffered < HEADER_SIZE) break;
      const head = this.peek(HEADER_SIZE);
      const command = head.readUInt32LE(0);
      const magic = head.readUInt32LE(20);
      if (((command ^ 0xffffffff) >>> 0) !== magic) throw new Error(`bad packet magic for command 0x${command.toString(16)}`);
      const length = head.readUInt32LE(12);
      if (this.buffered < HEADER_SIZE + length) break;
      const whole = this.take(HEADER_SIZE + length);
      out.push({
        command,
        arg0: whole.readUInt32LE(4),
        arg1: whole.readUInt32LE(8),
        data: whole.subarray(HEADER_SIZE),
      });
    }
    return out;
  }

  private peek(n: number): Buffer {
    if (this.chunks[0]!.length < n) this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0]!.subarray(0, n);
  }

  private take(n: number): Buffer {
    const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    const taken = all.subarray(0, n);
    const rest = all.subarray(n);
    this.chunks = rest.length ? [rest] : [];
    this.buffered = rest.length;
    return taken;
  }
}

export function commandName(command: number): string {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(command >>> 0, 0);
  return b.toString("latin1");
}
