/**
 * SnapshotService over a device's snapshots. Save/Load/Delete answer with `success` and, on
 * failure, a readable `err` (bytes, as the proto has it) rather than a gRPC error, as the emulator does.
 */
import type { Logger } from "@farm/log";
import { grpc, SnapshotFilterStatus, SnapshotLoadStatus, type SnapshotListMsg, type SnapshotPackageMsg } from "@farm/emulator-grpc";
import type { DeviceSnapshots } from "../snapshot/device-snapshots.ts";

const EMPTY = Buffer.alloc(0);

export function snapshotHandlers(snapshots: DeviceSnapshots, log: Logger): Record<string, grpc.UntypedHandleCall> {
  const answer = (id: string, op: () => Promise<unknown>, what: string): Promise<SnapshotPackageMsg> =>
    op().then(
      () => ({ snapshot_id: id, success: true, err: EMPTY }),
      (e: unknown) => {
        const msg = e instanceof Error ? e.message : String(e);
        log.warn({ event: `snapshot:${what}:failed`, snapshot: id, err: msg }, "snapshot operation failed");
        return { snapshot_id: id, success: false, err: Buffer.from(msg) };
      },
    );
  const unary = (what: string, op: (id: string) => Promise<unknown>): grpc.handleUnaryCall<SnapshotPackageMsg, SnapshotPackageMsg> =>
    (call, cb) => {
      const id = call.request.snapshot_id;
      void answer(id, () => op(id), what).then((res) => cb(null, res));
    };
  return {
    ListSnapshots: ((call, cb) => {
      // statusFilter CompatibleOnly (the default) leaves out snapshots that would not load here.
      const all = call.request.statusFilter === SnapshotFilterStatus.All;
      snapshots.list().then(
        (list) => cb(null, {
          snapshots: list.filter((s) => all || s.compatible).map((s) => ({
            snapshot_id: s.name,
            details: { logical_name: s.name, creation_time: Math.floor(s.createdAtMs / 1000), rotation: s.rotation, version: 1 },
            status: !s.compatible ? SnapshotLoadStatus.Incompatible : s.name === snapshots.current ? SnapshotLoadStatus.Loaded : SnapshotLoadStatus.Compatible,
            size: s.sizeBytes,
          })),
        }),
        (e: unknown) => cb({ code: grpc.status.INTERNAL, details: e instanceof Error ? e.message : String(e) }),
      );
    }) as grpc.handleUnaryCall<{ statusFilter: number }, SnapshotListMsg>,
    SaveSnapshot: unary("save", (id) => snapshots.save(id)),
    LoadSnapshot: unary("load", (id) => snapshots.load(id)),
    DeleteSnapshot: unary("delete", (id) => snapshots.delete(id)),
  };
}
