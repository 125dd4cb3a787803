/**
 * What the farm carries out for task code (README "What the farm carries out"): every call acts on the episode's
 * device and nothing else. Refused, because they would reach the farm host or other devices:
 *   - `install_apk.filesystem` and `generic ["install", …]` with a host path outside the family's task folder (or
 *     any host path when the instance was given no task folder): the file is read on the farm host, so a path
 *     could copy any host file onto a device the task code then pulls;
 *   - `generic` adb commands other than `shell`, `logcat`, `install` (as above), `uninstall`, `get-state`,
 *     `get-serialno`, `root`, `unroot` and `emu` with a device-only console command (gsm, sms, geo, sensor, rotate,
 *     power, network, finger, event): `push`/`pull`/`sync`/`backup`/`restore`/`bugreport` name host files; `-s`,
 *     `-t`, `-H`, `-P`, `connect`, `disconnect`, `forward`, `reverse`, `kill-server`, `devices`, `tcpip`, `reboot`, …
 *     reach the adb server, the host's network or other devices, or take the device away from the episode.
 * Everything else is passed to the device, whose driver answers what it cannot do (UNKNOWN_COMMAND,
 * FAILED_PRECONDITION) back to the task code, as AndroidEnv would.
 */
import fs from "node:fs";
import path from "node:path";
import { shQuote, shSplit } from "@farm/shell-words";
import type { AdbRequest } from "@farm/task";

const GENERIC_ALLOWED = new Set(["shell", "logcat", "install", "uninstall", "get-state", "get-serialno", "root", "unroot", "emu"]);
const EMU_ALLOWED = new Set(["gsm", "sms", "geo", "sensor", "rotate", "power", "network", "finger", "event"]);

export type Verdict = { ok: true; request: AdbRequest } | { ok: false; reason: string };

/** The host file an install may read: inside `taskDir` (after resolving symlinks), else a reason. */
function hostApk(p: string, taskDir: string | undefined): { ok: true; path: string } | { ok: false; reason: string } {
  const shown = JSON.stringify(p.slice(0, 200));
  if (!taskDir) return { ok: false, reason: `installs the host file ${shown}; this task server may install APKs only as blobs (no task folder is set for it)` };
  if (p === "" || p.includes("\0")) return { ok: false, reason: `installs an empty or invalid host path ${shown}` };
  const root = path.resolve(taskDir);
  const abs = path.resolve(root, p);
  const inside = (dir: string, f: string) => {
    const rel = path.relative(dir, f);
    return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
  };
  if (!inside(root, abs)) return { ok: false, reason: `installs the host file ${shown}, outside the task folder ${root}` };
  try {
    const real = fs.realpathSync(abs);
    if (!inside(fs.realpathSync(root), real)) return { ok: false, reason: `installs the host file ${shown}, which leads outside the task folder ${root}` };
  } catch {
    // Absent: the driver says so (or finds it by name in the worker's APK folders, which the operator chose).
  }
  return { ok: true, path: abs };
}

export function checkDeviceCall(req: AdbRequest, opts: { taskDir?: string }): Verdict {
  const cmd = req.cmd;
  if (cmd.command === "install_apk" && cmd.location.kind === "filesystem") {
    const h = hostApk(cmd.location.path, opts.taskDir);
    if (!h.ok) return { ok: false, reason: `install_apk ${h.reason}` };
    return { ok: true, request: { ...req, cmd: { ...cmd, location: { kind: "filesystem", path: h.path, declaredPath: cmd.location.declaredPath } } } };
  }
  if (cmd.command !== "generic") return { ok: true, request: req };
  const [head, ...rest] = cmd.args;
  const shownHead = JSON.stringify((head ?? "").slice(0, 40));
  if (head === undefined || !GENERIC_ALLOWED.has(head)) {
    return { ok: false, reason: `generic adb command ${shownHead} is not carried out for task code (allowed: ${[...GENERIC_ALLOWED].join(", ")}): it would reach beyond the episode's device` };
  }
  if (head === "emu" || head === "install") {
    let words: string[];
    try {
      words = shSplit(rest.join(" "));
    } catch {
      return { ok: false, reason: `generic ${head}: its arguments do not split into words` };
    }
    if (head === "emu") {
      if (!EMU_ALLOWED.has(words[0] ?? "")) return { ok: false, reason: `generic emu ${JSON.stringify((words[0] ?? "").slice(0, 40))} is not carried out for task code (allowed console commands: ${[...EMU_ALLOWED].join(", ")})` };
      return { ok: true, request: req };
    }
    const file = words[words.length - 1] ?? "";
    const h = hostApk(file, opts.taskDir);
    if (!h.ok) return { ok: false, reason: `generic install ${h.reason}` };
    return { ok: true, request: { ...req, cmd: { command: "generic", args: ["install", ...words.slice(0, -1).map(shQuote), shQuote(h.path)] } } };
  }
  return { ok: true, request: req };
}
