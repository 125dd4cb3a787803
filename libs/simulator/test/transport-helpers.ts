/** Test rig for the transport tests: a private adb server plus simulated devices, and an adb CLI runner. */
import { startAdbServer, type LocalAdbServer } from "@farm/local-services";
import { startSimulatedDevices, type SimFleet } from "../src/index.ts";
export { adbCli, eventually, type CliResult } from "../src/testing.ts";
export { sleep } from "@farm/time";

export interface Rig {
  adb: LocalAdbServer;
  fleet: SimFleet;
  close(): Promise<void>;
}

export async function startRig(count: number): Promise<Rig> {
  const adb = await startAdbServer();
  try {
    const fleet = await startSimulatedDevices({ adbPort: adb.port, count });
    return {
      adb,
      fleet,
      async close() {
        await fleet.close();
        await adb.close();
      },
    };
  } catch (e) {
    await adb.close();
    throw e;
  }
}

