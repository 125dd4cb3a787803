/**
 * AVDs as the emulator finds them: `<AVD home>/NAME.ini` points (`path=` absolute, else `path.rel=`
 * relative to the home's parent) at `NAME.avd/`, whose `config.ini` holds the hardware, screen size
 * from `hw.lcd.width` / `hw.lcd.height`.
 *
 * AVD home: $ANDROID_AVD_HOME (when it is a folder); $ANDROID_SDK_HOME/avd or
 * $ANDROID_SDK_HOME/.android/avd (when present); $ANDROID_USER_HOME/avd; $ANDROID_EMULATOR_HOME/avd;
 * else ~/.android/avd.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { FarmError } from "@farm/errors";

export interface Avd {
  name: string;
  /** The NAME.avd folder. */
  dir: string;
  screen: { width: number; height: number };
  config: Map<string, string>;
}

const AVD_NAME = /^[A-Za-z0-9._-]{1,100}$/;

export function avdHome(env: NodeJS.ProcessEnv = process.env): string {
  const isDir = (p: string | undefined): p is string => !!p && fs.statSync(p, { throwIfNoEntry: false })?.isDirectory() === true;
  if (isDir(env.ANDROID_AVD_HOME)) return env.ANDROID_AVD_HOME;
  const sdkHome = env.ANDROID_SDK_HOME;
  if (sdkHome) {
    if (isDir(path.join(sdkHome, "avd"))) return path.join(sdkHome, "avd");
    if (isDir(path.join(sdkHome, ".android", "avd"))) return path.join(sdkHome, ".android", "avd");
  }
  if (env.ANDROID_USER_HOME) return path.join(env.ANDROID_USER_HOME, "avd");
  if (env.ANDROID_EMULATOR_HOME) return path.join(env.ANDROID_EMULATOR_HOME, "avd");
  if (env.ANDROID_AVD_HOME) return env.ANDROID_AVD_HOME; // set but not created yet: where `avd create` writes
  return path.join(env.HOME || os.homedir(), ".android", "avd");
}

/** `key=value` lines (spaces around `=` allowed, `#` comments), as AVD ini files are written. */
export function parseIni(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith("#") || line.startsWith(";")) continue;
    const eq = line.indexOf("=");
    if (eq > 0) out.set(line.slice(0, eq).trim(), line.slice(eq + 1).trim());
  }
  return out;
}

/** AVD names in the home, sorted (what `-list-avds` prints). */
export function listAvds(home: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(home);
  } catch {
    return [];
  }
  return names.filter((n) => n.endsWith(".ini") && AVD_NAME.test(n.slice(0, -4))).map((n) => n.slice(0, -4)).sort();
}

export class AvdError extends FarmError<"invalid_avd"> {
  /** the same input fails the same way (not retryable). */
  constructor(message: string) {
    super("invalid_avd", message);
  }
}

export function readAvd(home: string, name: string): Avd {
  if (!AVD_NAME.test(name)) throw new AvdError(`invalid AVD name '${name}': use letters, digits, '.', '_' and '-'`);
  const iniPath = path.join(home, `${name}.ini`);
  let ini: Map<string, string>;
  try {
    ini = parseIni(fs.readFileSync(iniPath, "utf8"));
  } catch {
    throw new AvdError(`Unknown AVD name [${name}], use -list-avds to see valid list (looked for ${iniPath})`);
  }
  const abs = ini.get("path");
  const rel = ini.get("path.rel");
  const dir = abs && fs.existsSync(abs) ? abs : rel ? path.resolve(home, "..", rel) : abs;
  if (!dir) throw new AvdError(`${iniPath}: neither path= nor path.rel= names the AVD folder`);
  const configPath = path.join(dir, "config.ini");
  let config: Map<string, string>;
  try {
    config = parseIni(fs.readFileSync(configPath, "utf8"));
  } catch {
    throw new AvdError(`${iniPath}: the AVD folder has no readable config.ini (${configPath})`);
  }
  return { name, dir, config, screen: screenOf(config, configPath) };
}

function screenOf(config: Map<string, string>, where: string): { width: number; height: number } {
  const dim = (key: string, fallback: number): number => {
    const v = config.get(key);
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!/^\d+$/.test(v) || n < 16 || n > 8192) throw new AvdError(`${where}: ${key}=${v} is not a screen dimension (16..8192)`);
    return n;
  };
  return { width: dim("hw.lcd.width", 360), height: dim("hw.lcd.height", 640) };
}

/** Writes NAME.ini and NAME.avd/config.ini the way avdmanager lays them out; refuses to overwrite. */
export function createAvd(home: string, name: string, screen: { width: number; height: number }): Avd {
  if (!AVD_NAME.test(name)) throw new AvdError(`invalid AVD name '${name}': use letters, digits, '.', '_' and '-'`);
  if (!(Number.isInteger(screen.width) && Number.isInteger(screen.height) && screen.width >= 16 && screen.height >= 16 && screen.width <= 8192 && screen.height <= 8192)) {
    throw new AvdError(`screen ${screen.width}x${screen.height} is out of range (16..8192 each side)`);
  }
  const iniPath = path.join(home, `${name}.ini`);
  const dir = path.join(home, `${name}.avd`);
  if (fs.existsSync(iniPath) || fs.existsSync(dir)) throw new AvdError(`AVD '${name}' already exists in ${home}`);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, "config.ini"),
    [
      `AvdId=${name}`,
      `avd.ini.displayname=${name}`,
      "avd.ini.encoding=UTF-8",
      "abi.type=x86_64",
      "hw.cpu.arch=x86_64",
      "hw.device.name=farm-sim",
      `hw.lcd.width=${screen.width}`,
      `hw.lcd.height=${screen.height}`,
      "hw.lcd.density=160",
      "image.sysdir.1=system-images/android-30/default/x86_64/",
      "tag.id=default",
      "",
    ].join("\n"),
  );
  fs.writeFileSync(iniPath, [`avd.ini.encoding=UTF-8`, `path=${dir}`, `path.rel=${path.relative(path.dirname(home), dir)}`, "target=android-30", ""].join("\n"));
  return readAvd(home, name);
}
