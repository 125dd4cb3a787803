/**
 * `pm` (and `cmd package`): list packages|features|libraries|users, path, install (from a device
 * path, or `-S <size>` streamed on stdin as adb's streamed install sends it), uninstall, clear,
 * grant, revoke, dump.
 */
import { fail, stripUser, type CommandContext, type CommandTable } from "./types.ts";
import { readStdin } from "../shell/io.ts";
import type { InstalledPackage } from "../system/package-manager.ts";
import { SYSTEM_SERVER_PID } from "../system/activity-manager.ts";

const FEATURES = [
  "android.hardware.audio.output", "android.hardware.faketouch", "android.hardware.screen.landscape", "android.hardware.screen.portrait",
  "android.hardware.touchscreen", "android.hardware.touchscreen.multitouch", "android.software.app_widgets", "android.software.home_screen",
  "android.software.input_methods", "reqGlEsVersion=0x20000",
];
const LIBRARIES = ["android.test.base", "android.test.mock", "android.test.runner", "javax.obex", "org.apache.http.legacy"];

/** Options of `pm install` that take a value. */
const INSTALL_VALUE_OPTIONS = new Set(["-i", "--user", "--install-location", "--originating-uri", "--referrer", "-p", "--pkg", "--install-reason", "--force-uuid", "--abi", "--preload"]);

function listPackages(args: string[], ctx: CommandContext): number {
  let showPath = false;
  let only: "system" | "third" | undefined;
  let showVersion = false;
  let showUid = false;
  let filter: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--user") i++;
    else if (a === "--show-versioncode") showVersion = true;
    else if (a === "-U" || a === "--uid") showUid = true;
    else if (a.startsWith("-") && a !== "-") {
      for (const f of a.slice(1)) {
        if (f === "f") showPath = true;
        else if (f === "s") only = "system";
        else if (f === "3") only = "third";
        else if (f === "U") showUid = true;
        else if (!"deilu".includes(f)) return fail(ctx, `Error: Unknown option: ${a}`, 255);
      }
    } else filter = a;
  }
  const pkgs = ctx.sys.packages.list().filter((p) => (only === "system" ? p.system : only === "third" ? !p.system : true) && (!filter || p.name.includes(filter)));
  for (const p of pkgs) {
    let line = `package:${showPath ? `${p.apkPath}=` : ""}${p.name}`;
    if (showVersion) line += ` versionCode:${p.versionCode}`;
    if (showUid) line += ` uid:${p.uid}`;
    ctx.out(line + "\n");
  }
  return 0;
}

async function install(args: string[], ctx: CommandContext): Promise<number> {
  let size: number | undefined;
  let allowDowngrade = false;
  let path: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "-S") {
      size = Number(args[++i]);
      if (!Number.isInteger(size) || size < 0) return fail(ctx, `Error: invalid size: ${args[i]}`, 255);
    } else if (a === "-d") allowDowngrade = true;
    else if (INSTALL_VALUE_OPTIONS.has(a)) i++;
    else if (a.startsWith("-") && a !== "-") continue; // -r -t -g -l -s -f --instant --full --dont-kill …: accepted
    else path = a;
  }
  let bytes: Uint8Array;
  if (path === undefined || path === "-") {
    // Streamed install (`cmd package install -S <size>`): the APK arrives on stdin.
    bytes = await readStdin(ctx.stdin, ctx.signal, size);
    if (size !== undefined && bytes.length < size) {
      ctx.out(`Failure [INSTALL_FAILED_INVALID_APK: expected ${size} bytes, got ${bytes.length}]\n`);
      return 1;
    }
  } else {
    const data = ctx.sys.fs.read(path);
    if (!data) {
      ctx.err(`Error: Unable to open file: ${path}\nConsider using a file under /data/local/tmp/\n`);
      ctx.out("Failure [INSTALL_FAILED_INVALID_URI]\n");
      return 1;
    }
    bytes = data;
  }
  const result = ctx.sys.packages.install(bytes, { allowDowngrade });
  if (!result.ok) {
    ctx.out(`Failure [${result.code}]\n`);
    return 1;
  }
  // Replacing a package kills its running process.
  ctx.sys.activities.forceStop(result.pkg.name);
  ctx.sys.log.append({ pid: SYSTEM_SERVER_PID, tid: SYSTEM_SERVER_PID + 27, priority: "I", tag: "PackageManager", message: `Package ${result.pkg.name} codePath changed; installed versionCode ${result.pkg.versionCode}`, buffer: "system" });
  ctx.out("Success\n");
  return 0;
}

function lastPackageArg(args: string[]): string | undefined {
  return stripUser(args).filter((a) => !a.startsWith("-")).at(-1);
}

function requirePackage(ctx: CommandContext, name: string | undefined): InstalledPackage | number {
  if (!name) return fail(ctx, "Error: no package specified", 255);
  const p = ctx.sys.packages.get(name);
  if (!p) return fail(ctx, `Exception occurred while executing:\njava.lang.IllegalArgumentException: Unknown package: ${name}`, 255);
  return p;
}

export async function runPm(argsIn: string[], ctx: CommandContext): Promise<number> {
  const [sub, ...args] = argsIn;
  const sys = ctx.sys;
  switch (sub) {
    case "list":
      switch (args[0]) {
        case "packages":
          return listPackages(args.slice(1), ctx);
        case "features":
          FEATURES.forEach((f) => ctx.out(`feature:${f}\n`));
          return 0;
        case "libraries":
          LIBRARIES.forEach((l) => ctx.out(`library:${l}\n`));
          return 0;
        case "users":
          ctx.out("Users:\n\tUserInfo{0:Owner:c13} running\n");
          return 0;
        default:
          return fail(ctx, `Error: unknown list type '${args[0] ?? ""}'`, 255);
      }
    case "path": {
      const name = lastPackageArg(args);
      const p = name ? sys.packages.get(name) : undefined;
      if (!p) return 1;
      ctx.out(`package:${p.apkPath}\n`);
      return 0;
    }
    case "install":
      return install(args, ctx);
    case "uninstall": {
      const name = lastPackageArg(args);
      const p = name ? sys.packages.get(name) : undefined;
      if (p && !p.system) {
        sys.activities.forceStop(p.name);
        sys.packages.uninstall(p.name);
        ctx.out("Success\n");
        return 0;
      }
      ctx.out("Failure [DELETE_FAILED_INTERNAL_ERROR]\n");
      return 1;
    }
    case "clear": {
      // `pm clear [--user N] <pkg>`; AndroidEnv's current code may send `-f <user>` before the package.
      const name = args[args.length - 1];
      const p = name ? sys.packages.get(name) : undefined;
      if (!p) {
        ctx.out("Failed\n");
        return 1;
      }
      sys.activities.forceStop(p.name);
      // Its data goes too (databases, files, prefs), as PackageManager.clearApplicationUserData does.
      sys.packages.clearData(p.name);
      ctx.out("Success\n");
      return 0;
    }
    case "grant":
    case "revoke": {
      const [name, perm] = stripUser(args);
      const p = requirePackage(ctx, name);
      if (typeof p === "number") return p;
      if (!perm) return fail(ctx, "Error: no permission specified", 255);
      if (!/^[A-Za-z0-9_.]+$/.test(perm)) return fail(ctx, `Exception occurred while executing:\njava.lang.IllegalArgumentException: Unknown permission: ${perm}`, 255);
      if (sub === "grant") p.granted.add(perm);
      else p.granted.delete(perm);
      return 0;
    }
    case "dump": {
      const p = requirePackage(ctx, args[0]);
      if (typeof p === "number") return p;
      ctx.out(`Packages:\n  Package [${p.name}] (${p.uid.toString(16)}):\n    userId=${p.uid}\n    codePath=${p.apkPath.replace(/\/base\.apk$/, "")}\n    versionCode=${p.versionCode} minSdk=21 targetSdk=29\n    versionName=1.0\n`);
      ctx.out(`    runtime permissions:\n${[...p.granted].map((g) => `      ${g}: granted=true\n`).join("")}`);
      ctx.out(`    activities:\n${p.activities.map((a) => `      ${p.name}/${a}\n`).join("")}`);
      return 0;
    }
    case undefined:
      return fail(ctx, "usage: pm list packages | path | install | uninstall | clear | grant | revoke | dump", 1);
    default:
      return fail(ctx, `Unknown command: ${sub}`, 255);
  }
}

export const pmCommands: CommandTable = {
  pm: { latencyClass: "pm", run: runPm },
};
