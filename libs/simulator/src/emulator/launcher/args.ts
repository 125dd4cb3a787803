/**
 * The emulator's command line as launchers use it. Options the simulator acts on are typed; the
 * known ones that do not apply to it (window, GPU, audio, network shaping, …) are accepted and
 * ignored; anything else is an error naming the option, as the emulator refuses unknown options.
 */
import { FarmError } from "@farm/errors";

export interface EmulatorArgs {
  avd?: string;
  /** -ports C,A / -port C. */
  consolePort?: number;
  adbPort?: number;
  grpcPort?: number;
  grpcUseToken: boolean;
  readOnly: boolean;
  /** -no-snapshot: neither load nor save the quick-boot snapshot. */
  noSnapshot: boolean;
  noSnapshotLoad: boolean;
  noSnapshotSave: boolean;
  /** -snapshot NAME: boot from it, and save to it on exit. */
  snapshot?: string;
  listAvds: boolean;
  version: boolean;
  help: boolean;
  verbose: boolean;
  /** Accepted options with no effect on the simulator, for the verbose log. */
  ignored: string[];
}

/** Options taking a value that the simulator accepts and ignores. */
const IGNORED_WITH_VALUE = new Set([
  "-gpu", "-adb-path", "-feature", "-netspeed", "-netdelay", "-memory", "-partition-size", "-cores",
  "-camera-back", "-camera-front", "-skin", "-skindir", "-sdcard", "-data", "-system", "-kernel", "-ramdisk",
  "-prop", "-network-user-mode-options", "-wifi-user-mode-options", "-logcat", "-logcat-output", "-dns-server",
  "-http-proxy", "-timezone", "-accel", "-engine", "-debug", "-screen", "-sysdir", "-datadir", "-initdata",
  "-cache", "-cache-size", "-shell-serial", "-tcpdump", "-radio", "-gps", "-audio", "-selinux", "-id",
  "-grpc-tls-key", "-grpc-tls-cert", "-grpc-tls-ca", "-qt-hide-window-mode", "-scale", "-dpi-device", "-uiautomation",
  "-boot-property", "-append-userspace-opt", "-encryption-key", "-snapstorage", "-modem-simulator-port",
  "-report-console", "-chrome-trace", "-allow-host-audio", "-phone-number", "-wifi-client-port", "-wifi-server-port",
]);

/** Flags the simulator accepts and ignores. */
const IGNORED_FLAGS = new Set([
  "-no-window", "-no-skin", "-no-audio", "-noaudio", "-show-kernel", "-no-boot-anim", "-wipe-data", "-no-accel",
  "-no-metrics", "-no-passive-gps", "-no-sim", "-writable-system", "-delay-adb", "-qt-hide-window", "-no-hidpi-scaling",
  "-no-cache", "-no-snapstorage", "-force-snapshot-load", "-no-location-ui", "-no-direct-adb", "-skip-adb-auth",
  "-metrics-collection", "-grpc-use-jwt", "-no-jni", "-nojni", "-noskin", "-nocache", "-gpu-guest", "-fixed-scale",
  "-netfast", "-camera-off", "-use-host-vulkan",
]);

export class EmulatorArgsError extends FarmError<"invalid_args"> {
  /** the same input fails the same way (not retryable). */
  constructor(message: string) {
    super("invalid_args", message);
  }
}

export function parseEmulatorArgs(argv: string[]): EmulatorArgs {
  const a: EmulatorArgs = {
    grpcUseToken: false, readOnly: false, noSnapshot: false, noSnapshotLoad: false, noSnapshotSave: false,
    listAvds: false, version: false, help: false, verbose: false, ignored: [],
  };
  for (let i = 0; i < argv.length; i++) {
    const opt = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new EmulatorArgsError(`option ${opt} needs a value`);
      return v;
    };
    if (opt.startsWith("@") && opt.length > 1) {
      a.avd = opt.slice(1);
      continue;
    }
    // The emulator also takes --option for -option.
    const o = opt.startsWith("--") ? opt.slice(1) : opt;
    switch (o) {
      case "-avd": a.avd = value(); break;
      case "-ports": ({ consolePort: a.consolePort, adbPort: a.adbPort } = parsePorts(value())); break;
      case "-port": a.consolePort = parsePort("-port", value()); a.adbPort = a.consolePort + 1; break;
      case "-grpc": a.grpcPort = parsePort("-grpc", value()); break;
      case "-grpc-use-token": a.grpcUseToken = true; break;
      case "-read-only": a.readOnly = true; break;
      case "-no-snapshot": a.noSnapshot = true; break;
      case "-no-snapshot-load": a.noSnapshotLoad = true; break;
      case "-no-snapshot-save": a.noSnapshotSave = true; break;
      case "-snapshot": a.snapshot = value(); break;
      case "-list-avds": a.listAvds = true; break;
      case "-version": a.version = true; break;
      case "-help": case "-h": a.help = true; break;
      case "-verbose": a.verbose = true; break;
      case "-qemu": a.ignored.push(...argv.slice(i)); i = argv.length; break; // the rest goes to QEMU
      default:
        if (IGNORED_FLAGS.has(o)) a.ignored.push(opt);
        else if (IGNORED_WITH_VALUE.has(o)) a.ignored.push(opt, value());
        else if (o.startsWith("-")) throw new EmulatorArgsError(`unknown option: ${opt} (see -help for the options this simulated emulator takes)`);
        else throw new EmulatorArgsError(`unexpected argument '${opt}'; use '@${opt}' or '-avd ${opt}' to launch a virtual device named '${opt}'`);
    }
  }
  return a;
}

function parsePort(opt: string, v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v) || n < 1 || n > 65535) throw new EmulatorArgsError(`${opt}: '${v}' is not a port number (1..65535)`);
  return n;
}

function parsePorts(v: string): { consolePort: number; adbPort: number } {
  const m = /^(\d+),(\d+)$/.exec(v);
  if (!m) throw new EmulatorArgsError(`-ports needs <console port>,<adb port>, got '${v}'`);
  const consolePort = parsePort("-ports", m[1]!);
  const adbPort = parsePort("-ports", m[2]!);
  // Any two ports, as the emulator takes them (AndroidEnv sends a random console port and an adb port in
  // 5555..5585); adb still names the device emulator-<adb port - 1> (see EMULATOR.md).
  if (adbPort === consolePort) throw new EmulatorArgsError(`-ports ${v}: the console and adb ports must differ`);
  return { consolePort, adbPort };
}

export const EMULATOR_USAGE = `usage: emulator -avd <name> [options]     (a simulated Android emulator)
       emulator -list-avds

  -avd <name> | @<name>      the virtual device to boot (from the AVD home, see README)
  -ports <console>,<adb>     console and adb ports, any two; the serial is emulator-<adb - 1>
                             (default: first free pair 5554..5585)
  -port <console>            the console port; adb on console + 1
  -grpc <port>               serve gRPC (android.emulation.control) on this port
  -grpc-use-token            require 'authorization: Bearer <token>' (token in the discovery file)
  -snapshot <name>           boot from this snapshot and save to it on exit
  -no-snapshot               cold boot, save nothing on exit
  -no-snapshot-load / -no-snapshot-save
  -read-only                 refuse snapshot save/load/delete
  -verbose                   log what is accepted and ignored
  -list-avds, -version, -help
Accepted and ignored: -no-window -no-skin -no-audio -gpu <mode> -show-kernel -adb-path <p> -feature <f>
  -netspeed <s> -netdelay <d> -memory <mb> -no-boot-anim -wipe-data -qemu … and other display/hardware options.
Environment: ANDROID_AVD_HOME / ANDROID_SDK_HOME / ANDROID_USER_HOME (AVD home), ANDROID_ADB_SERVER_PORT
  (default 5037); ANDROID_SDK_ROOT, ANDROID_HOME, ANDROID_EMULATOR_KVM_DEVICE, LD_LIBRARY_PATH and
  QT_XKB_CONFIG_ROOT are accepted and not needed; FARM_EMULATOR_PROFILE (instant | emulator-adb | emulator-grpc), FARM_EMULATOR_SEED,
  FARM_EMULATOR_FAULTS (e.g. crash-after-ms=5000,hang-after-ms=2000,app-crash-after-ms=3000,tap-drop=0.1).
`;
