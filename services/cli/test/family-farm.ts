/** A local farm for the family campaign tests; apart from fixtures.ts so light tests do not load the farm. */
import path from "node:path";
import { createLogger } from "@farm/log";
import { startLocalFarm, type LocalFarm } from "@farm/local-farm";
import { REPO } from "./fixtures.ts";

/**
 * A local farm (HTTP scheduler, `devices` simulated devices) that runs `familyPath` with the UI solutions of
 * tasks/solutions as scripted policies: what the family campaign tests submit to.
 */
export function startFamilyFarm(o: { familyPath: string; devices: number; outDir: string; queuePrefix: string; service: string }): Promise<LocalFarm> {
  return startLocalFarm({
    devices: o.devices,
    taskPaths: [o.familyPath],
    outDir: o.outDir,
    queuePrefix: o.queuePrefix,
    logger: createLogger({ service: o.service, level: "error" }),
    environment: {},
    worker: { policyDir: path.join(REPO, "tasks/solutions"), episode: { settleMs: 20 } },
    bindTimeoutMs: 90_000,
    scheduler: { http: true, tickMs: 100 },
  });
}
