/** The farm's version: the root package.json's (one version for the whole monorepo, as `farm --version`). */
import { readFileSync } from "node:fs";

function readVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as { version?: unknown };
    return typeof pkg.version === "string" && /^[0-9A-Za-z.+-]{1,64}$/.test(pkg.version) ? pkg.version : "unknown";
  } catch {
    return "unknown";
  }
}

export const FARM_VERSION = readVersion();
