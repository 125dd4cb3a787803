import type net from "node:net";
import {
  A_CLSE, A_CNXN, A_OKAY, A_OPEN, A_VERSION, A_WRTE, PacketReader, encodePacket, type Packet,
} from "./packet.ts";
import { AdbStream, type StreamSink } from "./stream.ts";

/** Picks the service for an OPEN: a starter for the accepted stream, or undefined to refuse it (CLSE(0, id)). */
export type ServiceRouter = (service: string) => ((stream: AdbStream) => void) | undefined;

export interface ConnectionOptions {
  /** `device::ro.product.name=…;features=…` sent in our CNXN. */
  banner: string;
  /** Largest payload we accept; the negotiated value is min(host's, ours). */
  maxData: number;
  router: ServiceRouter;
  /** Called once when the host's CNXN has been answered (the device is online). */
  onOnline?: () => void;
}

/**
 * The device side of one ADB transport connection (the adb server connected to us): handshake,
 * stream table, acks, and a pause switch that freezes all I/O (fault: hang).
 */
export class AdbConnection implements StreamSink {
  private readonly reader = new PacketReader();
  private readonly streams = new Map<number, AdbStream>();
  private nextLocalId = 1;
  private negotiatedMaxData: number;
  private paused = false;
  private held: Buffer[] = [];
  private dead = false;
  /** Corked until the next tick (send): the packets of one turn go out in one write. */
  private corked = false;
  private readonly uncork = (): void => {
    this.corked = false;
    this.socket.uncork();
  };

  constructor(
    private readonly socket: net.Socket,
    private readonly opts: ConnectionOptions,
  ) {
    this.negotiatedMaxData = opts.maxData;
    socket.setNoDelay(true);
    socket.on("data", (chunk: Buffer) => this.onChunk(chunk));
    socket.on("error", () => {});
    socket.on("close", () => this.teardown());
  }

  get maxData(): number {
    return this.negotiatedMaxData;
  }

  /** Freezes (true) or thaws (false) the connection: nothing is read, nothing is sent meanwhile. */
  setPaused(on: boolean): void {
    if (this.paused === on) return;
    this.paused = on;
    if (on) {
      this.socket.pause();
      return;
    }
    const held = this.held;
    this.held = [];
    for (const b of held) this.socket.write(b);
    this.socket.resume();
  }

  destroy(): void {
    this.socket.destroy();
    this.teardown();
  }

  sendWrite(localId: number, remoteId: number, data: Uint8Array): void {
    this.send(encodePacket(A_WRTE, localId, remoteId, data));
  }

  sendClose(localId: number, remoteId: number): void {
    this.streams.delete(localId);
    this.send(encodePacket(A_CLSE, localId, remoteId));
  }

  private send(packet: Buffer): void {
    if (this.dead) return;
    if (this.paused) {
      this.held.push(packet);
      return;
    }
    // The packets of one turn (an OKAY and the WRTE after it, a WRTE and its CLSE) leave in one write.
    if (!this.corked) {
      this.corked = true;
      this.socket.cork();
      process.nextTick(this.uncork);
    }
    this.socket.write(packet);
  }

  private onChunk(chunk: Buffer): void {
    let packets: Packet[];
    try {
      packets = this.reader.push(chunk);
    } catch {
      this.destroy(); // garbage on the wire: a real adbd drops the connection too
      return;
    }
    for (const p of packets) this.handle(p);
  }

  private handle(p: Packet): void {
    switch (p.command) {
      case A_CNXN:
        this.handleConnect(p);
        return;
      case A_OPEN:
        this.handleOpen(p);
        return;
      case A_OKAY:
        this.streams.get(p.arg1)?.handleAck();
        return;
      case A_WRTE: {
        const stream = this.streams.get(p.arg1);
        if (!stream) return;
        this.send(encodePacket(A_OKAY, stream.localId, stream.remoteId));
        stream.onData(p.data);
        return;
      }
      case A_CLSE: {
        const stream = this.streams.get(p.arg1);
        if (!stream) return;
        this.streams.delete(stream.localId);
        if (!stream.isClosed) this.send(encodePacket(A_CLSE, stream.localId, stream.remoteId));
        stream.handleRemoteClose();
        return;
      }
      default:
        return; // AUTH/STLS/unknown: we never ask for them, so ignore
    }
  }

  private handleConnect(p: Packet): void {
    // A (re)connect resets the session: drop every stream of the previous one.
    for (const s of this.streams.values()) s.handleRemoteClose();
    this.streams.clear();
    this.negotiatedMaxData = Math.max(256, Math.min(p.arg1 || this.opts.maxData, this.opts.maxData));
    this.send(encodePacket(A_CNXN, A_VERSION, this.opts.maxData, Buffer.from(this.opts.banner, "utf8")));
    this.opts.onOnline?.();
  }

  private handleOpen(p: Packet): void {
    const remoteId = p.arg0;
    const service = p.data.toString("utf8").replace(/\0+$/, "");
    const start = this.opts.router(service);
    if (!start) {
      this.send(encodePacket(A_CLSE, 0, remoteId));
      return;
    }
    const localId = this.allocateId();
    const stream = new AdbStream(localId, remoteId, service, this);
    this.streams.set(localId, stream);
    this.send(encodePacket(A_OKAY, localId, remoteId)); // must precede the service's first WRTE
    try {
      start(stream);
    } catch {
      stream.close();
    }
  }

  private allocateId(): number {
    for (;;) {
      const id = this.nextLocalId;
      this.nextLocalId = this.nextLocalId >= 0x7fffffff ? 1 : this.nextLocalId + 1;
      if (!this.streams.has(id)) return id;
    }
  }

  private teardown(): void {
    if (this.dead) return;
    this.dead = true;
    for (const s of this.streams.values()) s.handleRemoteClose();
    this.streams.clear();
    this.held = [];
  }
}
