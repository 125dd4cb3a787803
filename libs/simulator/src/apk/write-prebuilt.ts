/** Writes the prebuilt simulated APKs: `node --import tsx libs/simulator/src/apk/write-prebuilt.ts [dir]` (default tasks/apks). */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { prebuiltApkFiles } from "./prebuilt.ts";

export const DEFAULT_APK_DIR = resolve(fileURLToPath(new URL("../../../../tasks/apks", import.meta.url)));

export function writePrebuiltApks(dir: string = DEFAULT_APK_DIR): string[] {
  mkdirSync(dir, { recursive: true });
  return prebuiltApkFiles().map(({ file, bytes }) => {
    const path = join(dir, file);
    writeFileSync(path, bytes);
    return path;
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const p of writePrebuiltApks(process.argv[2])) console.log(`wrote ${p}`);
}
