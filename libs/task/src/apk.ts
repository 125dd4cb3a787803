/** Where an APK named by a task lives on this host. */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, isAbsolute, join, resolve, sep } from "node:path";
import type { ApkLocation } from "./model.ts";

/**
 * A `filesystem.path` as written in a task file → an absolute host path. Relative paths resolve against the task
 * file's folder first, then each APK folder (as written, then by file name). If none exists, the task-folder path
 * is returned and `found` is false (the install step will fail with a clear message at run time).
 * Confinement: an absolute path, a `..` segment, or a file whose real path (symlinks resolved) lies outside the
 * folder it was found in is refused (`refused` says why): a task file may only install APKs from its own folder
 * and the configured APK folders.
 */
export function locateFilesystemApk(declared: string, taskDir: string, apkDirs: readonly string[]): { path: string; found: boolean; refused?: string } {
  if (isAbsolute(declared) || /^[A-Za-z]:[\\/]/.test(declared)) return { path: declared, found: false, refused: "an absolute path leaves the task's folder and the APK folders" };
  if (declared.split(/[\\/]/).includes("..")) return { path: declared, found: false, refused: "a '..' segment leaves the task's folder and the APK folders" };
  const candidates: { root: string; path: string }[] = [{ root: taskDir, path: resolve(taskDir, declared) }];
  for (const dir of apkDirs) candidates.push({ root: dir, path: resolve(dir, declared) }, { root: dir, path: resolve(dir, basename(declared)) });
  const hit = candidates.find((c) => existsSync(c.path));
  if (!hit) return { path: candidates[0]!.path, found: false };
  if (!insideRealPath(hit.root, hit.path)) return { path: hit.path, found: false, refused: `${hit.path} resolves (through a symlink) to a file outside ${hit.root}` };
  return { path: hit.path, found: true };
}

/** Whether `path`'s real location (symlinks resolved) is inside `root`'s real location. */
export function insideRealPath(root: string, path: string): boolean {
  try {
    const r = realpathSync(root);
    const p = realpathSync(path);
    return p.startsWith(r.endsWith(sep) ? r : r + sep);
  } catch {
    return false;
  }
}

/**
 * The one rule for which host file an install step means (the task loader, the runner's up-front check and
 * the driver's install all use it): `filesystem` → its resolved path if it exists, else a file of the same
 * name in an APK folder (the worker's host may keep APKs elsewhere than the loader's); `mpm` (an internal
 * package store that does not exist outside Google) → a file named `mpm.path` in an APK folder.
 * Undefined when there is none; `blob` has no host file.
 */
export function findApk(location: Exclude<ApkLocation, { kind: "blob" }>, apkDirs: readonly string[]): string | undefined {
  if (location.kind === "filesystem" && location.path !== "" && existsSync(location.path)) return location.path;
  const name = basename(location.path);
  if (name === "") return undefined;
  for (const dir of apkDirs) {
    const p = join(dir, name);
    if (existsSync(p)) return p;
  }
  return undefined;
}

/**
 * The host path of the APK to install for `location` (`findApk`'s rule); `blob` contents are written once to a
 * content-addressed temporary file. Throws an Error saying what to do otherwise.
 */
export function resolveApk(location: ApkLocation, apkDirs: readonly string[]): string {
  switch (location.kind) {
    case "filesystem": {
      const found = findApk(location, apkDirs);
      if (found) return found;
      throw new Error(
        `APK not found: ${location.path} (written as "${location.declaredPath}"). Put the file there, or in an APK folder ` +
          `(apkDirs / --apk-dir), or change filesystem.path in the task (relative paths start at the task file's folder).`,
      );
    }
    case "mpm": {
      const found = findApk(location, apkDirs);
      if (found) return found;
      throw new Error(
        `the task installs "${location.path}" from the internal mpm package store (${location.packageName}, label ${location.label}), ` +
          `which is not available outside its owner. Supply a local APK: put a file named "${basename(location.path)}" in an APK folder ` +
          `(apkDirs / --apk-dir; searched: ${apkDirs.length ? apkDirs.join(", ") : "none configured"}), or replace the mpm location with ` +
          `install_apk { filesystem { path: "path/to/app.apk" } }.`,
      );
    }
    case "blob": {
      const digest = createHash("sha256").update(location.contents).digest("hex").slice(0, 16);
      const dir = join(tmpdir(), "farm-apk-blobs");
      const p = join(dir, `${digest}.apk`);
      if (!existsSync(p)) {
        mkdirSync(dir, { recursive: true });
        writeFileSync(p, location.contents);
      }
      return p;
    }
  }
}
